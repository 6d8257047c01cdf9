// `jitdump fold DUMP < perf-script`: folded stacks from perf script text piped in, every JIT
// frame named from one dump and expanded into its inline chain. It is `jitdump report` for a
// single dump applied to every sample whatever its pid (the text may come from any perf script
// invocation): the same parser (report/perf_script.h) and the same frame resolution
// (report/profile_reader.h), so callers are looked up inside their call instruction and perf's
// flat output (no -g) folds too.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <string>

#include "jitdump/report/jvm_code.h"
#include "jitdump/report/perf_script.h"

namespace jitdump::tool {

// The parser's types, under the names the fuzzer and older callers use.
using report::ParseFrameLine;
using report::ParseHex;
using report::ParseSampleTime;
using report::ScriptFrame;

struct FoldStats {
  uint64_t samples = 0;
  uint64_t jit_frames = 0;       // frames whose address fell in a code load
  uint64_t expanded_frames = 0;  // of those, frames expanded through a DEBUG_INFO2 record
  uint64_t time_resolved = 0;    // JIT frames mapped to other code than the final state because of the sample time
  uint64_t before_load = 0;      // JIT frames older than every load covering them (mapped to the first)
};

// Reads perf script text from `in` and adds one count per sample to `stacks`
// ("comm;outermost;...;innermost" -> count), resolving JIT frames against `dump`.
void FoldPerfScript(std::istream& in, std::unique_ptr<report::JvmCode> dump, std::map<std::string, uint64_t>& stacks,
                    FoldStats& stats);

}  // namespace jitdump::tool
