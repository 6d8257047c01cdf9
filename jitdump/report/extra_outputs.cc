#include "jitdump/report/extra_outputs.h"

namespace jitdump::report {

// PENDING (report-outputs): replace with calls to WritePprof / WriteFlameGraphHtml.
bool WritePprofOutput(const Profile&, std::ostream&, std::string* error) {
  *error = "pprof output is not available in this build yet";
  return false;
}

bool WriteFlameGraphOutput(const Profile&, const std::string&, std::ostream&, std::string* error) {
  *error = "the HTML flame graph is not available in this build yet";
  return false;
}

bool ExtraOutputsAvailable() { return false; }

}  // namespace jitdump::report
