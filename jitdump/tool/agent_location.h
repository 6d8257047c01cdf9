// Where the agent library is, as the jitdump tool sees it: the one place that knows the layouts
// the tool and the agent are built and installed in. `jitdump agent-path` prints the answer and
// `jitdump attach` loads it when no --agent is given; perf-java, jitdump-attach and the other
// scripts locate only the tool and ask it.
#pragma once

#include <string>

namespace jitdump::tool {

struct AgentLocation {
  std::string path;  // canonical; empty when none was found (`why` says what was tried)
  std::string from;  // "JITDUMPAGENT_LIB", "installed" or "build": which rule found it
  std::string why;   // when `path` is empty: what was looked at and why each was not taken
};

// $JITDUMPAGENT_LIB when set and not empty (taken as given: the user chose it). Else the agent
// at a path fixed at configure time relative to this executable's own directory (through
// /proc/self/exe): first the installed layout (bin/jitdump and LIBDIR/libjitdumpagent/), then
// the build tree's (jitdump/tool/jitdump and agent/). Nothing is searched. A candidate counts
// only as a regular file owned by root or the tool's owner, writable by nobody else, in a
// directory nobody else can change (nor any directory above it): the tool may run as root and
// hand that path to another user's JVM.
AgentLocation LocateAgent();

// As LocateAgent, with `exe` standing for /proc/self/exe (tests).
AgentLocation LocateAgentBeside(const std::string& exe);

}  // namespace jitdump::tool
