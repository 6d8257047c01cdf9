// `jitdump agent-path`: prints the agent library this tool belongs with (agent_location.h), the
// one answer perf-java, jitdump-attach and `jitdump attach` use.
#include <cstdio>

#include "jitdump/tool/agent_location.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump agent-path [--json]\n"
    "Prints the path of libjitdumpagent.so that goes with this jitdump: $JITDUMPAGENT_LIB when set,\n"
    "else the agent installed beside this tool (bin/jitdump and LIBDIR/libjitdumpagent/), else the\n"
    "one in the build tree this tool was built in (build/jitdump/tool/jitdump and build/agent/).\n"
    "Only those paths are looked at, relative to this executable; the file must be owned by root\n"
    "or this tool's owner, and neither it nor a directory above it writable by another user.\n"
    "--json adds which rule found it: {\"agent\": PATH, \"from\": \"JITDUMPAGENT_LIB\"|\"installed\"|\"build\"}.\n"
    "exit status: 0 found, 1 no agent (the message says what was looked at)\n";

int AgentPath(const Invocation& in) {
  const AgentLocation agent = LocateAgent();
  if (agent.path.empty()) {
    std::fprintf(stderr, "jitdump: no agent library found (%s); set JITDUMPAGENT_LIB to its path\n",
                 agent.why.c_str());
    return kExitInvalid;
  }
  if (in.json) {
    PrintJson({{"agent", agent.path}, {"from", agent.from}});
  } else {
    std::printf("%s\n", agent.path.c_str());
  }
  return kExitOk;
}

}  // namespace

extern const Command kAgentPathCommand{
    .name = "agent-path",
    .synopsis = "agent-path",
    .summary = "print the path of the agent library that goes with this tool",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .min_operands = 0,
    .max_operands = 0,
    .operands = "no operands",
    .run = AgentPath,
};

}  // namespace jitdump::tool
