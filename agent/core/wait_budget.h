// The one budget for every wait a JVM thread can see. A lifecycle transition that a JVM thread
// runs (a stop on the Attach Listener, VM death and Agent_OnUnload together, a start that finds
// the previous session still closing) takes a WaitBudget when it begins and every wait in it
// takes what is left: however many steps wait (callbacks in flight, the writer resolving what
// it holds, lookups under way, the last write), the JVM thread waits at most kJvmWaitBudgetMs
// in all. A step that runs out gives up, and what it leaves undone is counted (a stalled writer's
// records as lost.writer_stalled) or left to the writer thread, never waited for longer.
#pragma once

#include <time.h>

#include <cstdint>

namespace jitdump_agent {

// What VM death and unload took at most before this budget existed was about 11 s (seven
// separate timeouts); one shared budget of 5 s covers the same steps. The writer normally
// has nothing left to do by then (it drains every flush_ms), so the budget is only spent when
// the disk hangs or the JVM stops answering.
inline constexpr uint32_t kJvmWaitBudgetMs = 5000;

class WaitBudget {
 public:
  explicit WaitBudget(uint32_t total_ms = kJvmWaitBudgetMs) : deadline_ns_(NowNs() + total_ms * 1000000ull) {}
  // Milliseconds left, 0 once spent.
  uint32_t RemainingMs() const {
    const uint64_t now = NowNs();
    return now >= deadline_ns_ ? 0 : static_cast<uint32_t>((deadline_ns_ - now + 999999) / 1000000);
  }
  bool Spent() const { return NowNs() >= deadline_ns_; }

 private:
  static uint64_t NowNs() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }
  uint64_t deadline_ns_;
};

}  // namespace jitdump_agent
