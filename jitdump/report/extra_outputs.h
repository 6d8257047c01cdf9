// The report outputs another part of the project writes from a Profile: pprof
// (profile.proto, gzipped) and the self-contained HTML flame graph. `jitdump report` calls
// them only through these two functions.
//
// PENDING: the writers themselves (jitdump/report/pprof_writer.h, flamegraph_writer.h) are
// being written in parallel on branch report-outputs; until they land, extra_outputs.cc says
// they are not available and `jitdump report` fails for --pprof and --html with that message.
// When they land, extra_outputs.cc calls WritePprof and WriteFlameGraphHtml, nothing else
// changes.
#pragma once

#include <ostream>
#include <string>

#include "jitdump/report/profile.h"

namespace jitdump::report {

// False (with `error`) when the output cannot be written.
bool WritePprofOutput(const Profile& profile, std::ostream& out, std::string* error);
bool WriteFlameGraphOutput(const Profile& profile, const std::string& title, std::ostream& out, std::string* error);
// Whether this build has the writers (the default `-o DIR` outputs include them only then).
bool ExtraOutputsAvailable();

}  // namespace jitdump::report
