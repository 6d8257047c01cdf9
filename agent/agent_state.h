// JVMTI glue: everything the callbacks and the agent's lifecycle share. Created once per
// process and deliberately never freed: HotSpot may still be running a callback after VMDeath
// and Agent_OnUnload (disabling events does not wait for callbacks in flight), so nothing they
// can reach is ever destroyed.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstdint>

#include "agent/hand_off.h"
#include "agent/jvm_method_source.h"
#include "agent/jvmti_method_lookup.h"
#include "agent/options.h"
#include "agent/record_queue.h"
#include "agent/stats.h"
#include "agent/writer.h"
#include "jitdump/safe_file.h"

namespace jitdump_agent {

struct AgentState {
  explicit AgentState(const Options& opts)
      : options(opts), queue(options, stats), writer(options, stats, queue, hand_off) {}

  const Options options;
  Stats stats;
  RecordQueue queue;
  HandOff hand_off;  // before the writer, which serves it
  Writer writer;
  // What the callbacks read, on its own cache line: the writer thread keeps writing its own
  // members (its mutex every poll) just above.
  alignas(64) jvmtiEnv* jvmti = nullptr;
  JavaVM* vm = nullptr;
  uint32_t pid = 0;
  // How callbacks resolve the loads they do not defer (set up once jvmti is; leaked like the
  // rest). The writer's own is in its resolver (jvm_resolver.h), owned by hand_off.
  JvmtiLoadNaming* naming = nullptr;
  // The JVM's side of the method table (interp=on, on JVMs whose layout is known); null
  // otherwise. Leaked like the rest.
  JvmMethodSource* method_source = nullptr;
  std::atomic<bool> stats_written{false};
  // The directory of stats=PATH, held from start-up (jitdump/safe_file.h).
  jitdump::HeldDirectory stats_dir;
  // When the agent started (CLOCK_REALTIME): a file of ours written since is not stale.
  int64_t start_realtime_ns = 0;
};

// The process-wide state, or null before OnLoad/OnAttach set it up.
AgentState* State();

}  // namespace jitdump_agent
