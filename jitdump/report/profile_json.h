// The Profile itself as JSON (`jitdump report --profile-json`): exactly what the pprof and HTML
// flame-graph writers are handed, for tests that check the model they draw and for anyone who
// wants the symbolized samples without parsing an output format.
#pragma once

#include <ostream>

#include "jitdump/report/profile.h"

namespace jitdump::report {

// {"functions": [{name, file, kind}], "mappings": [{file, start, limit, offset}],
//  "locations": [{address, mapping, lines: [{function, line}] innermost first}],
//  "samples": [{locations: leaf first, process, thread, count, nanos}],
//  "processes": [{pid, command, dump, dump_pid}], period_ns, start_ns, end_ns}
// Indexes are positions in those arrays, as in Profile. Written piece by piece: a profile of
// millions of samples is never held twice.
void WriteProfileJson(const Profile& profile, std::ostream& out);

}  // namespace jitdump::report
