// Profiles the report-output tests write: one small profile with known inline chains, shaped
// like the workload, and a large synthetic one for size and speed.
#pragma once

#include <cstdint>

#include "jitdump/report/profile.h"

namespace jitdump::report::testing {

// One JVM (pid 4242, "java", dump /tmp/run/jit-4242.dump), period 250 µs, stacks leaf first:
//   600  leaf:12 | caller:20 (inlined) main:31 | call_stub | JavaCalls::call_helper | start_thread
//   300  mix:41 (inlined) digest:52 | main:33 | call_stub | call_helper | start_thread
//   200  mix:41 (compiled on its own) | checksum:61 | main:35 | call_stub | call_helper | start_thread
//    50  Interpreter | call_stub | call_helper | start_thread
//    30  clear_page_erms | asm_exc_page_fault | leaf:14 | caller:20 main:31 | call_stub | ...
//    20  (an address in libjvm.so nothing names) | start_thread   [thread "C2 CompilerThre"]
// So mix() is called from two callers and inlined into only one (digest), and caller() is
// inlined into main(). Java functions are in demo/Inline.java.
Profile InlineDemoProfile();

// How the synthetic profile's stacks are spread.
enum class SyntheticShape {
  // A service: every stack starts in one of four framework chains (10-24 frames) and branches
  // below them; a distinct stack per 25 samples.
  kService,
  // The worst case for size: stacks are random walks from the first frames on, a distinct
  // stack per 8 samples, so few call paths are shared.
  kScattered,
};

// `samples` samples over two JVMs and sixteen threads, drawn from a random call graph of a few
// thousand Java methods (with inline chains, interpreted frames, stubs, native and kernel
// frames). Deterministic for a given seed.
Profile SyntheticProfile(uint64_t samples, uint64_t seed, SyntheticShape shape = SyntheticShape::kService);

}  // namespace jitdump::report::testing
