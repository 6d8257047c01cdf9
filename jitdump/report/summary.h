// The JSON summary of a report: how much of the recording the tool could name, per JVM, and
// what the reader saw. Scripts and tests read it instead of parsing the text outputs.
//
// Shares count samples by their innermost frame (sample_leaf.h):
//   named_percent           of all samples, the ones whose innermost frame has a name
//   jit_named_percent       of the samples in JIT code, the ones a dump named
//   java_with_line_percent  of the samples in compiled Java methods (compiled or inlined),
//                           the ones with a source line
//   interpreted_percent     of all samples, the ones in HotSpot's interpreter
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "jitdump/report/profile.h"
#include "jitdump/report/profile_reader.h"

namespace jitdump::report {

// `agent_stats`: per process index, the JSON the JVM's agent wrote with stats= (omitted when
// absent).
nlohmann::json Summary(const Profile& profile, const ReadStats& stats,
                       const std::map<uint32_t, nlohmann::json>& agent_stats);

}  // namespace jitdump::report
