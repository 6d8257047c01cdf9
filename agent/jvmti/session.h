// JVMTI glue: one session of the agent, from a start (Agent_OnLoad, or Agent_OnAttach with
// options) to its stop or the JVM's exit: its options, the dump and perf map its writer thread
// writes, the queue between callbacks and writer, what names loads on each side, its stats.
// A new start makes a new session (possibly with another dir=); the process-wide lifecycle
// (lifecycle.h) says which session, if any, the callbacks feed.
//
// A session is freed once it has stopped and no callback can reach it any more (no ticket in
// flight); one a callback might still reach (the JVM exits, or a callback outlived every
// budget) is never freed: HotSpot may still run a callback after events were disabled.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "agent/jvmti/jvm_method_source.h"
#include "agent/jvmti/jvm_resolver.h"
#include "agent/jvmti/jvmti_method_lookup.h"
#include "agent/core/lifecycle.h"
#include "agent/core/options.h"
#include "agent/core/record_queue.h"
#include "agent/core/stats.h"
#include "agent/core/writer.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {

struct Session {
  Session(const Options& opts, Lifecycle& lifecycle_)
      : options(opts), lifecycle(lifecycle_), queue(options, stats), writer(options, stats, queue, lifecycle) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Options options;
  Lifecycle& lifecycle;
  Stats stats;
  RecordQueue queue;
  // The JVM's side of the method table (interp=on, on JVMs whose layout is known); null
  // otherwise. The writer reads through it while attached, and is destroyed first.
  std::unique_ptr<JvmMethodSource> method_source;
  Writer writer;
  // What the callbacks read, on its own cache line: the writer thread keeps writing its own
  // members (its mutex every poll) just above.
  alignas(64) jvmtiEnv* jvmti = nullptr;
  JavaVM* vm = nullptr;
  uint32_t pid = 0;
  // How callbacks resolve the loads they do not defer, and the writer's resolver (null: every
  // load is resolved in its callback).
  std::unique_ptr<JvmtiLoadNaming> naming;
  std::unique_ptr<JvmResolver> resolver;
  std::atomic<bool> stats_written{false};
  // The directory of stats=PATH, held from the start (jitdump/write/safe_file.h).
  jitdump::HeldDirectory stats_dir;
  // When the session started (CLOCK_REALTIME): a file of ours written since is not stale.
  int64_t start_realtime_ns = 0;
  bool attached = false;  // started by Agent_OnAttach (a late attach), not with the JVM
  // The thread that stops the session joins its writer and frees it (else the writer, ending
  // on its own, frees it: agent.cc).
  std::atomic<bool> freed_by_stopper{false};
};

}  // namespace jitdump_agent
