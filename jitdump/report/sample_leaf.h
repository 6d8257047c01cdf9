// What the CPU was running in a sample: the innermost frame of its leaf location. The per-line
// table and the summary count samples by it.
#pragma once

#include <cstdint>

#include "jitdump/report/profile.h"

namespace jitdump::report {

struct SampleLeaf {
  const Function* function = nullptr;  // the innermost frame (an inlined callee when inlined)
  uint32_t line = 0;                   // its source line, 0 when unknown
  const Function* compiled = nullptr;  // the function owning the code (outermost of the chain)
  const Mapping* mapping = nullptr;
};

SampleLeaf LeafOf(const Profile& profile, const Sample& sample);
// The same for a leaf location (an index into profile.locations).
SampleLeaf LeafAt(const Profile& profile, uint32_t location);

// Java code: a compiled method or a method inlined into one.
inline bool IsJava(FrameKind kind) { return kind == FrameKind::kCompiled || kind == FrameKind::kInlined; }

// The leaf is JIT code no dump described: perf's unnamed frame in a perf map or anonymous
// executable memory (where HotSpot's code cache lives), not a frame perf has no mapping for.
bool IsUnresolvedJit(const SampleLeaf& leaf);

}  // namespace jitdump::report
