// Everything the callbacks share. Created once per process and deliberately never freed:
// HotSpot may still be running a callback after VMDeath and Agent_OnUnload (disabling events
// does not wait for callbacks in flight), so nothing they can reach is ever destroyed.
#pragma once

#include <jvmti.h>

#include <atomic>
#include <cstdint>

#include "agent/clock.h"
#include "agent/method_cache.h"
#include "agent/options.h"
#include "agent/record_queue.h"
#include "agent/stats.h"
#include "agent/writer.h"

namespace jitdump_agent {

struct AgentState {
  explicit AgentState(const Options& opts)
      : options(opts), queue(options, stats), writer(options, stats, queue) {}

  const Options options;
  Stats stats;
  RecordQueue queue;
  Writer writer;
  // What the callbacks read and update, on its own cache line: the writer thread keeps writing
  // its own members (its mutex every poll) just above.
  alignas(64) jvmtiEnv* jvmti = nullptr;
  JavaVM* vm = nullptr;
  MethodCache* cache = nullptr;  // needs jvmti; leaked like the rest
  uint32_t pid = 0;
  bool line_tables = false;      // the line capabilities were granted (for lines= or inline=)
  bool lines = true;             // the line capabilities were granted and lines=on
  // Set when resolve= and the JVM version allow resolving loads on the writer thread; leaked
  // like the rest.
  LoadResolver* resolver = nullptr;
  // kDeferring while the writer thread is attached and resolving: loads are then only copied
  // in the callback. kStopped is final (VM death, or the writer detached): a writer that
  // finishes attaching after VM death began must not turn deferring back on. `deferring`
  // counts callbacks between reading the state and pushing their batch, so VM death can stop
  // deferring and know when no deferred load is still on its way.
  enum DeferState : int { kResolveInCallback, kDeferring, kStopped };
  std::atomic<int> defer_state{kResolveInCallback};
  std::atomic<int> deferring{0};
  std::atomic<bool> closed{false};
  std::atomic<int> in_flight{0};
  std::atomic<bool> stats_written{false};
};

// The process-wide state, or null before OnLoad/OnAttach set it up.
AgentState* State();

// Installs the event callbacks and enables the events on `state->jvmti`.
jvmtiError EnableEvents(AgentState* state);
// Replays already compiled and generated code (late attach), on the calling thread.
void ReplayExistingCode(AgentState* state);
// Replays the non-nmethod blobs only (at VM death, for blobs HotSpot never posted live).
void ReplayStubs(AgentState* state);

}  // namespace jitdump_agent
