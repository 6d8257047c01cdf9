// One agent per process, however many copies of the library the JVM loads: the same file twice
// (an attach after -agentpath) shares this copy's globals, but a second copy at another path (a
// sidecar's JAVA_TOOL_OPTIONS next to the application's own -agentpath) has globals of its own,
// so the claim must live outside the library.
#pragma once

namespace jitdump_agent {

enum class Claim {
  kClaimed,            // this load runs the agent; ReleaseProcess() when its session ends
  kHeldByThisCopy,     // this library already runs the agent
  kHeldByAnotherCopy,  // another copy of the library does
};

Claim ClaimProcess();
// Gives the claim up again (the session ended, or the agent disabled itself at start-up): a
// later load, of this copy or another, may run the agent. Closes the claim's descriptor.
void ReleaseProcess();

}  // namespace jitdump_agent
