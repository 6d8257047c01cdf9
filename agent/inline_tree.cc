#include "agent/inline_tree.h"

namespace jitdump_agent {

const jitdump::InlineDebugInfo* InlineTreeBuilder::Build(uint64_t, uint64_t, uint64_t, const MethodLines&,
                                                          std::span<const PcSite>) {
  return nullptr;  // implemented with the inline-frames work
}

}  // namespace jitdump_agent
