// `jitdump check FILE`: validates a dump as perf 6.1 and samply read it; exit 0 when there is no
// error (warnings allowed), 1 otherwise.
#include <cstdio>
#include <string>
#include <vector>

#include "jitdump/read/consumer_rules.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump check [--json] FILE\n"
    "Validates FILE as perf 6.1 (perf inject --jit) and samply read it. Prints one line per\n"
    "problem: offset N (0xN): error|warning: message. Exit 0 when there is no error (warnings\n"
    "allowed), 1 otherwise.\n";

int CheckFile(const Invocation& in) {
  const std::string& path = in.operands[0];
  JitDump dump;
  if (!LoadDump(path, &dump)) return kExitUsage;  // an unreadable header is a problem to report
  const std::vector<Problem> problems = Check(dump);
  size_t errors = 0, warnings = 0;
  for (const Problem& p : problems) (p.severity == Severity::kError ? errors : warnings)++;
  const bool valid = errors == 0;
  if (in.json) {
    PrintJsonObjectWithArray(
        {{"file", path}, {"valid", valid}, {"errors", errors}, {"warnings", warnings}, {"records", dump.records.size()}},
        "problems", problems.size(),
        [&](size_t i) -> Json {
          return {{"offset", problems[i].offset},
                  {"severity", SeverityName(problems[i].severity)},
                  {"message", problems[i].message}};
        },
        Json::object());
  } else {
    for (const Problem& p : problems) std::printf("%s\n", FormatProblem(p).c_str());
    std::printf("%s: %s, %zu records, %zu errors, %zu warnings\n", path.c_str(), valid ? "valid" : "INVALID",
                dump.records.size(), errors, warnings);
  }
  return valid ? kExitOk : kExitInvalid;
}

}  // namespace

extern const Command kCheckCommand{
    .name = "check",
    .synopsis = "check FILE",
    .summary = "validate for perf 6.1 and samply; exit 0 valid, 1 invalid",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .run = CheckFile,
};

}  // namespace jitdump::tool
