#include "jitdump/tool/report_outputs.h"

#include "jitdump/report/flamegraph_writer.h"
#include "jitdump/report/pprof_writer.h"

namespace jitdump::tool {

bool WritePprofOutput(const report::Profile& profile, std::ostream& out, std::string* error) {
  const Status status = report::WritePprof(profile, out);
  if (!status.ok()) *error = status.ToString();
  return status.ok();
}

bool WriteFlameGraphOutput(const report::Profile& profile, const std::string& title, std::ostream& out,
                           std::string* error) {
  report::FlameGraphOptions options;
  options.title = title;
  // Stacks of different JVMs must not merge: a level of process frames when there are several
  // (the writer's default).
  const Status status = report::WriteFlameGraphHtml(profile, options, out);
  if (!status.ok()) *error = status.ToString();
  return status.ok();
}

}  // namespace jitdump::tool
