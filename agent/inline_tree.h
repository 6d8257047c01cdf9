// Builds samply's inline debug-info record (SAMPLY_JIT_CODE_DEBUG_INFO2) for one compiled
// method from HotSpot's PcDesc scope chains. Pure C++.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "agent/line_map.h"
#include "jitdump/encoder.h"

namespace jitdump_agent {

class InlineTreeBuilder {
 public:
  // Returns a record view valid while this builder lives, or nullptr when there is nothing
  // to describe. `root` is the compiled method; sites as for BuildLineRows.
  const jitdump::InlineDebugInfo* Build(uint64_t timestamp, uint64_t code_start, uint64_t code_size,
                                        const MethodLines& root, std::span<const PcSite> sites);

 private:
  jitdump::InlineDebugInfo info_;
  std::vector<std::string_view> files_;
  std::vector<std::string_view> function_names_;
  std::vector<jitdump::SamplyFunctionRecord> functions_;
  std::vector<jitdump::SamplyInlineCallRecord> calls_;
  std::vector<jitdump::SamplyRangeRecord> ranges_;
  std::vector<jitdump::SamplyLineRecord> lines_;
};

}  // namespace jitdump_agent
