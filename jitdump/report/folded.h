// Folded stacks, the input of flamegraph.pl, speedscope and inferno: one line per distinct
// stack, "thread;outermost;...;innermost COUNT", with every JIT frame expanded into its inline
// chain. The first frame is the sampled thread's name, as perf's stackcollapse-perf.pl writes.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "jitdump/report/profile.h"

namespace jitdump::report {

struct FoldedOptions {
  // Append the suffixes FlameGraph's --color=java and async-profiler use to tell frames apart:
  // "_[j]" compiled Java, "_[i]" inlined Java, "_[0]" interpreted, "_[k]" kernel. Native code,
  // stubs and unknown frames get none.
  bool annotate = false;
};

// The folded stacks: stack text -> samples. ';' separates frames, so one inside a name becomes
// ','; line breaks become spaces. Samples of different processes or addresses that fold to the
// same text are merged.
std::map<std::string, uint64_t> FoldStacks(const Profile& profile, const FoldedOptions& options);

// FoldStacks as "STACK COUNT" lines, sorted (byte order) so the output is deterministic.
// `by_path`: SamplesByPath(profile) when the caller has it (it is sorted here otherwise).
void WriteFolded(const Profile& profile, const FoldedOptions& options, std::ostream& out,
                 const std::vector<uint32_t>* by_path = nullptr);

}  // namespace jitdump::report
