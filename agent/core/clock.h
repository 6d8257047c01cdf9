// The one clock of the dump: CLOCK_MONOTONIC in nanoseconds, what `perf record -k 1` samples with.
#pragma once

#include <time.h>

#include <cstdint>

namespace jitdump_agent {

inline uint64_t MonotonicNanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CPU time of the calling thread. A system call (no vDSO fast path): for diagnostics only.
inline uint64_t ThreadCpuNanos() {
  struct timespec ts;
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace jitdump_agent
