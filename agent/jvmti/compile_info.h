// JVMTI glue: copies the PcDesc scope chains out of a CompiledMethodLoad's compile_info (valid
// only inside the callback) into plain ScopePc/ScopeFrame lists (code_event.h).
#pragma once

#include <span>
#include <vector>

#include "agent/core/code_event.h"

namespace jitdump_agent {

// Appends the chains of compile_info's inline records to `pcs` and `frames`, in HotSpot's
// order (ascending pc; innermost frame first). PcDescs without frames are skipped.
void CollectScopes(const void* compile_info, std::vector<ScopePc>& pcs, std::vector<ScopeFrame>& frames);

// The same in two passes, for a deferred load to copy the chains straight into its event (one
// copy instead of two inside the callback): how many PcDescs and frames CollectScopes would
// append, then writing exactly those into spans of that size.
ScopeCounts CountScopes(const void* compile_info);
void FillScopes(const void* compile_info, std::span<ScopePc> pcs, std::span<ScopeFrame> frames);

}  // namespace jitdump_agent
