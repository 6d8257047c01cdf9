// JVMTI glue: the agent behind the three exported entry points (entry.cc), and the JVM's side of
// every lifecycle transition (lifecycle.h): starting a session (Agent_OnLoad, or Agent_OnAttach
// with options), stopping it (Agent_OnAttach with `stop`, its own stop_after= deadline, a dump
// deleted under it), VM death and Agent_OnUnload. One agent per process, whatever loads it how
// often and from however many copies of the library (process_claim.h); one session at a time.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/lifecycle.h"
#include "agent/core/timed_mutex.h"
#include "agent/jvmti/session.h"
#include "agent/core/wait_budget.h"

namespace jitdump_agent {

class Agent {
 public:
  Agent() = default;
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Agent_OnLoad (`attach` false) and Agent_OnAttach: starts a session with `options`, or stops
  // the active one (`stop`). What the JVM's entry point returns.
  jint Load(JavaVM* vm, const char* options, bool attach) noexcept;
  // The VMDeath callback: the active session's part (callbacks.h: HandleVMDeath), or a stop
  // under way finished within the budget.
  void VMDeath() noexcept;
  // Agent_OnUnload (called once per load of the library): closes the session, writes its stats.
  void Unload() noexcept;

  Lifecycle& lifecycle() { return lifecycle_; }
  // The session of the phase now, for tests (null when dormant).
  Session* session() const { return static_cast<Session*>(lifecycle_.session()); }

 private:
  using Lock = std::unique_lock<TimedMutex>;
  jint Start(Lock& lock, JavaVM* vm, const Options& options, const std::string& option_string, bool attach);
  // The `stop` option: stops the active session (or waits for one stopping); returns JNI_OK.
  jint StopRequested(Lock& lock, const WaitBudget& budget);
  // Stops the active session on this JVM thread, within `budget`: events off, callbacks in
  // flight waited for, the writer finished (files closed, stats written) and joined, the
  // session freed when no callback can reach it. Called and returns with `lock` held.
  void StopActive(Lock& lock, const WaitBudget& budget, StopCause cause);
  // The writer's stop_due hook (writer.h), on the writer thread.
  bool StopFromWriter(Session* s, StopCause cause);
  // The writer's ended hook: the session's stats, and the lifecycle back to dormant.
  void SessionEnded(Session* s);
  // The lifecycle back to kDormant if `s` is still the session stopping; the process claim goes
  // first, so a later start can take it.
  void EndStop(Session* s);
  // A load while a session is active: nothing changes (said at warn level when the options differ).
  void ExplainIgnoredLoad(const std::string& options);
  // Waits (within `budget`) until no event has arrived for a few ms and none is in flight:
  // HotSpot may still deliver events it took up before they were disabled.
  void AwaitQuiet(const Session& s, const WaitBudget& budget) const;
  // Frees stopped sessions no callback can reach any more (transition lock held).
  void FreeRetired();
  // Writes the session's stats once (stats=), then lets go of their directory.
  void WriteStats(Session* s);
  void WriteStatsFile(Session* s);

  TimedMutex transition_;  // decisions only: no holder waits for the writer
  Lifecycle lifecycle_;
  jvmtiEnv* jvmti_ = nullptr;    // one environment for the process, kept across sessions
  JavaVM* vm_ = nullptr;
  // The option string the active session started with, so a second load can say whether its
  // options differ.
  std::string active_options_;
  // VM death and Agent_OnUnload share one budget (the JVM waits for both in a row).
  std::optional<WaitBudget> exit_budget_;
  std::mutex retired_mutex_;
  std::vector<Session*> retired_;  // stopped, not yet freed (a callback could still reach them)
};

// The process's agent (never freed: a callback may run after VM death and Agent_OnUnload).
Agent& TheAgent();

jint OnLoad(JavaVM* vm, char* options) noexcept;
jint OnAttach(JavaVM* vm, char* options) noexcept;
void OnUnload(JavaVM* vm) noexcept;

}  // namespace jitdump_agent
