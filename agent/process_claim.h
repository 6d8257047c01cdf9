// One agent per process, however many copies of the library the JVM loads: the same file twice
// (an attach after -agentpath) shares this copy's globals, but a second copy at another path (a
// sidecar's JAVA_TOOL_OPTIONS next to the application's own -agentpath) has globals of its own,
// so the claim must live outside the library.
#pragma once

namespace jitdump_agent {

enum class Claim {
  kClaimed,            // this load runs the agent; Release() if it then disables itself
  kHeldByThisCopy,     // this library already runs the agent
  kHeldByAnotherCopy,  // another copy of the library does
};

Claim ClaimProcess();
// Gives the claim up again (the agent disabled itself at start-up): a later load may run.
void ReleaseProcess();

}  // namespace jitdump_agent
