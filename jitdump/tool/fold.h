// Folding `perf script` output into flame-graph stacks, expanding JIT frames into their
// inline chains from a jitdump.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <string_view>

#include "jitdump/read/dump.h"
#include "jitdump/read/queries.h"

namespace jitdump::tool {

struct FoldStats {
  uint64_t samples = 0;
  uint64_t jit_frames = 0;       // frames whose address fell in a code load
  uint64_t expanded_frames = 0;  // of those, frames expanded through a DEBUG_INFO2 record
  uint64_t time_resolved = 0;    // JIT frames mapped to an earlier load because of the sample time
};

// Reads perf script text from `in` and adds one count per sample to `stacks`
// ("comm;outermost;...;innermost" -> count). See the CLI help for the accepted format.
// `sidecar` supplies inline records moved out by `jitdump strip-inline` (may be empty).
void FoldPerfScript(std::istream& in, const JitDump& dump, const CodeMap& map, const SidecarIndex& sidecar,
                    std::map<std::string, uint64_t>& stacks, FoldStats& stats);

// A hexadecimal address, "0x" optional, at most 16 digits (perf script's ips, addr2line's ADDR).
bool ParseHex(std::string_view text, uint64_t* value);

// "12345.678901:" (perf script's time field) -> nanoseconds.
bool ParseSampleTime(std::string_view token, uint64_t* ns);

// One frame line ("7f12ab sym+0x10 (/tmp/perf-1.map)") split into address, symbol and dso.
struct ScriptFrame {
  uint64_t addr = 0;
  std::string sym;
  std::string dso;
};
bool ParseFrameLine(std::string_view line, ScriptFrame* frame);

}  // namespace jitdump::tool
