// The agent's lifecycle: one state machine, one enum (Phase), every transition in this file's
// table (lifecycle.cc: Lifecycle::Allowed). It decides what each JVMTI callback does with its
// event, whether a compiled load is named in its callback or copied for the writer to name
// ("deferred"), when the writer thread attaches to the JVM and detaches again, and when calls
// into the JVM must stop. Process-wide and never freed: HotSpot may run a callback after
// events were disabled (JDK-8373645), so what a callback reads first must outlive everything.
//
//                  Start (Agent_OnLoad, or Agent_OnAttach with options)
//     kDormant ─────────────────────────────────────────────────────► kNaming ◄──┐ the writer ended
//       ▲   ▲                                                            │       │ without a stop
//       │   │ the writer closed the dump (SessionEnded)                  ▼       │ (a failed start)
//       │   └─────────────── kStopping ◄──── Stop ──────────────────── kDeferring┘
//       │                       │      (option `stop`, stop_after=,   ▲ the writer attached
//       │                       │       a deleted dump; also from     │ (VMInit; at once on attach)
//       │                       │       kNaming)                      │
//       │                       │ VMDeath, the stop not done          │ VMDeath (from kNaming too)
//       │                       ▼ within the budget                   ▼
//       │   VMDeath           kClosed ◄── Agent_OnUnload ── kDead ◄── kDying
//       └──(no session)─────────►▲                   VMDeath returned
//
//   phase       callbacks take events   compiled loads named by   JVM callable (JvmScope)
//   kDormant    no (no session)          -                          yes
//   kNaming     yes                      the callback               yes
//   kDeferring  yes                      the writer (attached)      yes
//   kStopping   no (counted lost)        -                          yes
//   kDying      yes                      the callback; the writer   yes
//                                        resolves what it holds,
//                                        then detaches
//   kDead       yes                      the callback (JVMTI says   no: VMDeath has returned
//                                        WRONG_PHASE: cached names)
//   kClosed     no (counted lost)        -                          no (final)
//
// Counters that are not states: tickets held by callbacks (in_flight), tickets that defer a
// load (deferring), JvmScopes open. A transition that has to wait for one of them does so
// after the phase has changed, within the caller's WaitBudget (wait_budget.h).
//
//  - A callback Enter()s first and keeps its Ticket until its event is queued. The ticket says
//    whether the event is taken, whether a compiled load is deferred, and which session it
//    belongs to (the session is freed only once no ticket can reach it).
//  - The writer calls Serve from its loop: it attaches on BeginDeferring's request (and moves
//    kNaming to kDeferring), and once the phase has left kDeferring it resolves every deferred
//    load and detaches, but only when no callback that chose to defer is still on its way to
//    the queue: a deferred load is always resolved on an attached thread, its class pin
//    released there.
//  - Calls into the JVM that must not outlive it run in a JvmScope. CloseJvm (the end of
//    VMDeath, after which HotSpot turns the phase DEAD) waits for the scopes open and makes
//    later ones not live: JVMTI then refuses lookups (WRONG_PHASE), and a thread entering the
//    JVM through JNI or JMM after it has exited blocks forever.
//
// Plain C++: the agent (agent.cc) does the JVM's part of each transition.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "agent/core/load_resolver.h"

namespace jitdump_agent {

enum class Phase : int {
  kDormant,
  kNaming,
  kDeferring,
  kStopping,
  kDying,
  kDead,
  kClosed,
};
const char* PhaseName(Phase phase);

// Why a session ended (its stats say which).
enum class StopCause : int {
  kNone,         // still running, or the JVM exited first
  kRequested,    // the option `stop` (jitdump-attach PID stop, perf-java -p at its end)
  kStopAfter,    // stop_after= passed (the agent's own deadline)
  kDumpDeleted,  // the dump was deleted under the agent (its link count was 0)
  kReplaced,     // a new attach found the dump deleted and started a new session
  kVmDeath,      // the JVM exited
  kFailedStart,  // enabling the events failed
};
const char* StopCauseName(StopCause cause);

class Lifecycle {
 public:
  class [[nodiscard]] Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    // false: no session takes the event (dormant, stopping, closed). With a session() the
    // event counts as lost after close; without, it belongs to no session.
    bool accepted() const { return accepted_; }
    // A compiled load to copy for the writer rather than resolve here.
    bool defer() const { return defer_; }
    // The session the event belongs to (what Lifecycle::Start was given), or null.
    void* session() const { return session_; }

   private:
    friend class Lifecycle;
    Ticket(Lifecycle& owner, bool accepted, bool defer, void* session)
        : owner_(owner), accepted_(accepted), defer_(defer), session_(session) {}
    Lifecycle& owner_;
    const bool accepted_;
    const bool defer_;
    void* const session_;
  };

  // A stretch of calls into the JVM; live() says whether the JVM is still live for it.
  class [[nodiscard]] JvmScope {
   public:
    ~JvmScope();
    JvmScope(const JvmScope&) = delete;
    JvmScope& operator=(const JvmScope&) = delete;
    // false: VM death has passed (CloseJvm): JNI and JMM must not be called, JVMTI may refuse.
    bool live() const { return live_; }

   private:
    friend class Lifecycle;
    JvmScope(Lifecycle& owner, bool live) : owner_(owner), live_(live) {}
    Lifecycle& owner_;
    const bool live_;
  };

  Lifecycle() = default;
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // Whether `from` may become `to`: the table of the diagram above.
  static bool Allowed(Phase from, Phase to);
  Phase phase() const { return phase_.load(std::memory_order_seq_cst); }

  // --- setting up a session (before Start) ---
  // Without a resolver every load is resolved in its callback.
  void SetResolver(LoadResolver* resolver) { resolver_.store(resolver, std::memory_order_release); }
  LoadResolver* resolver() const { return resolver_.load(std::memory_order_acquire); }
  // How to wake the session's writer when there is something to Serve; `owner` (the writer)
  // takes it back with ClearWaker before it is freed (a later writer's stays).
  void SetWaker(const void* owner, std::function<void()> wake);
  void ClearWaker(const void* owner);

  // --- callbacks (any JVM thread) ---
  // `compiled_load`: a CompiledMethodLoad, which may be deferred.
  Ticket Enter(bool compiled_load);
  int in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  // Any thread, around calls into the JVM.
  JvmScope EnterJvm();

  // --- transitions (agent threads; agent.cc serializes the decisions) ---
  // kDormant -> kNaming with `session` (the callbacks' Ticket::session()). false when not dormant.
  bool Start(void* session);
  // Asks the writer to attach (VMInit, or at once on a late attach).
  void BeginDeferring();
  // kNaming|kDeferring -> kStopping: callbacks take no more events for the session. false when
  // no session is active.
  bool BeginStop();
  // kStopping -> kDormant for `session` (the writer has closed it), which is forgotten;
  // `before` runs first, under the lifecycle's lock, only if the move happens. false when the
  // phase has moved on meanwhile (VM death closed the agent) or another session is stopping.
  bool EndStop(void* session, const std::function<void()>& before = nullptr);
  // Waits at most `timeout_ms` while the phase is `phase`; returns the phase then.
  Phase AwaitPhaseOtherThan(Phase phase, uint32_t timeout_ms) const;
  // VMDeath: kNaming|kDeferring -> kDying, then waits at most `timeout_ms` for the writer to
  // resolve what was deferred and detach; false when it did not get there in time (it still
  // resolves every deferred load before it detaches).
  bool StopDeferring(uint32_t timeout_ms);
  // The end of VMDeath: kDying -> kDead (kDormant|kStopping -> kClosed); every later JvmScope
  // is not live. Waits at most `timeout_ms` for the scopes open now; false on timeout.
  bool CloseJvm(uint32_t timeout_ms);
  // -> kClosed: refuses every event from now on. true for the first caller only.
  bool Close();
  bool closed() const { return phase() == Phase::kClosed; }
  // The session of the phase now (null when dormant). For agent threads; callbacks read it from
  // their Ticket.
  void* session() const { return session_.load(std::memory_order_acquire); }
  // Waits at most `timeout_ms` until no ticket is held; false on timeout.
  bool AwaitIdle(uint32_t timeout_ms) const;

  // --- the writer thread ---
  // Attaches or detaches as asked. Before detaching it calls `drain`, which must process the
  // queue until it is empty. Returns true while it is waiting for deferring callbacks to queue
  // their loads: call again soon.
  bool Serve(const std::function<void()>& drain);
  // Whether Serve has something to do.
  bool HasRequest() const;
  // Whether the writer is attached now (writer thread only): deferred loads can be resolved.
  bool attached() const { return attached_; }
  // When the writer thread ends: waits at most `timeout_ms` for callbacks that chose to defer
  // to queue their loads (so `drain` resolves them), drains if attached, detaches, never defers
  // again.
  void DetachAtExit(const std::function<void()>& drain = nullptr, uint32_t timeout_ms = 0);

 private:
  void Wake();
  void Leave(bool deferring);
  // Moves the phase from one of `from` to `to` (Allowed), under mutex_; false if the phase is
  // none of them.
  bool Move(std::initializer_list<Phase> from, Phase to);
  bool MoveLocked(std::initializer_list<Phase> from, Phase to);
  bool JvmLive(Phase p) const { return p != Phase::kDead && p != Phase::kClosed; }
  bool WriterMayStayAttached(Phase p) const { return p == Phase::kNaming || p == Phase::kDeferring; }

  std::atomic<LoadResolver*> resolver_{nullptr};
  std::mutex waker_mutex_;  // taken before the writer's own lock, never after it
  const void* waker_owner_ = nullptr;
  std::function<void()> wake_;
  // What every callback reads, on its own cache line.
  alignas(64) std::atomic<Phase> phase_{Phase::kDormant};
  std::atomic<void*> session_{nullptr};
  std::atomic<int> in_flight_{0};
  // Callbacks between reading kDeferring and queueing their load (sequentially consistent with
  // phase_, so the writer seeing 0 after the phase left kDeferring knows no deferred load is
  // still coming).
  std::atomic<int> deferring_{0};
  // JvmScopes open (sequentially consistent with phase_, as deferring_).
  std::atomic<int> jvm_scopes_{0};

  alignas(64) mutable std::mutex mutex_;
  mutable std::condition_variable changed_;  // the phase moved, or the writer detached
  // Guarded by mutex_: a request for the writer, and the writer's own state.
  bool attach_requested_ = false;
  bool attached_ = false;  // written on the writer thread only
};

}  // namespace jitdump_agent
