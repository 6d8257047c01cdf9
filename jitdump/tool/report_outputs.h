// The two report outputs written by the pprof and flame-graph writers (jitdump/report/
// pprof_writer.h, flamegraph_writer.h), as `jitdump report` calls them: its own file, so that a
// build of the tool without those writers (the fuzzer, which never runs `report`) replaces just
// this file.
#pragma once

#include <ostream>
#include <string>

#include "jitdump/report/profile.h"

namespace jitdump::tool {

// False (with `error`) when the output cannot be written.
bool WritePprofOutput(const report::Profile& profile, std::ostream& out, std::string* error);
bool WriteFlameGraphOutput(const report::Profile& profile, const std::string& title, std::ostream& out,
                           std::string* error);

}  // namespace jitdump::tool
