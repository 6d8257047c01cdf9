// JVMTI glue: copies the PcDesc scope chains out of a CompiledMethodLoad's compile_info (valid
// only inside the callback) into plain ScopePc/ScopeFrame lists (code_event.h).
#pragma once

#include <vector>

#include "agent/code_event.h"

namespace jitdump_agent {

// Appends the chains of compile_info's inline records to `pcs` and `frames`, in HotSpot's
// order (ascending pc; innermost frame first). PcDescs without frames are skipped.
void CollectScopes(const void* compile_info, std::vector<ScopePc>& pcs, std::vector<ScopeFrame>& frames);

}  // namespace jitdump_agent
