// The consumer rules: what perf 6.1 (`perf inject --jit`, tools/perf/util/jitdump.c) and samply
// would object to in a dump the decoder could read. Header size, version and flags as perf
// checks them, DEBUG_INFO placement and ordering, unique code_index, one clock for the header
// and the records, and the samply inline-record rules that need the following CODE_LOAD. Each
// rule says in its message what the consumer does with the defect.
#pragma once

#include <vector>

#include "jitdump/read/dump.h"

namespace jitdump {

// The decoding problems plus everything perf 6.1 and samply would object to, sorted by offset.
std::vector<Problem> Check(const JitDump& dump);

}  // namespace jitdump
