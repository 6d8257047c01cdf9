// `jitdump perfmap FILE`: the perf-<pid>.map text of the code the dump leaves mapped.
#include <cstdio>
#include <string>

#include "jitdump/write/perf_map.h"
#include "jitdump/read/queries.h"
#include "jitdump/tool/command.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump perfmap FILE\n"
    "Prints perf-<pid>.map lines (START SIZE name, hex) for the code the dump leaves mapped:\n"
    "where loads overlap, the latest one wins.\n";

int Perfmap(const Invocation& in) {
  JitDump dump;
  if (const int status = LoadReadableDump(in.operands[0], &dump); status != kExitOk) return status;
  const CodeMap map(dump);
  std::string out;
  for (const auto& [start, span] : map.spans()) {
    AppendPerfMapLine(span.start, span.end - span.start, dump.records[span.record].load()->name, out);
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

extern const Command kPerfmapCommand{
    .name = "perfmap",
    .synopsis = "perfmap FILE",
    .summary = "the equivalent perf-<pid>.map text (latest code at each address wins)",
    .usage = kUsage,
    .operands = "exactly one FILE",
    .run = Perfmap,
};

}  // namespace jitdump::tool
