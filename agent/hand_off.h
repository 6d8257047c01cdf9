// The hand-off between the JVM's callbacks and the writer thread, with one owner: which events
// the agent still takes, whether a CompiledMethodLoad is resolved in its callback or copied for
// the writer to resolve ("deferred"), and when the writer attaches to the JVM for that and
// detaches again.
//
//  - A callback Enter()s first and keeps its Ticket until its event is queued. The ticket says
//    whether the event is taken at all (not once Close has run) and whether a compiled load is
//    deferred. Tickets are counted (in_flight), deferring ones separately.
//  - BeginDeferring (VMInit, or at once on a late attach) asks the writer to attach its
//    LoadResolver; once attached, loads are deferred.
//  - StopDeferring (VMDeath) makes every later load resolve in its callback, then waits until
//    the writer has resolved what was deferred before (while JVMTI still answers) and detached.
//    The writer detaches only once no callback that chose to defer is still on its way to the
//    queue, however late it comes: a deferred load is always resolved on an attached thread,
//    and its class pin released there.
//  - Close (Agent_OnUnload) refuses every later event; AwaitIdle waits for tickets in flight.
//  - Calls into the JVM that must not outlive it run in a JvmScope. CloseJvm (the end of
//    VMDeath, after which HotSpot turns the phase DEAD) waits for the scopes open and marks
//    later ones not live: JVMTI then refuses lookups (WRONG_PHASE), and a thread entering the
//    JVM through JNI or JMM after it has exited blocks forever.
//
// The writer calls Serve from its loop: attaching and detaching happen there, on its thread.
// Plain C++: the resolver does the JVM's part.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "agent/load_resolver.h"

namespace jitdump_agent {

class HandOff {
 public:
  class [[nodiscard]] Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    // false: the agent has closed; the event is lost (the caller counts it).
    bool accepted() const { return accepted_; }
    // A compiled load to copy for the writer rather than resolve here.
    bool defer() const { return defer_; }

   private:
    friend class HandOff;
    Ticket(HandOff& owner, bool accepted, bool defer) : owner_(owner), accepted_(accepted), defer_(defer) {}
    HandOff& owner_;
    const bool accepted_;
    const bool defer_;
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
    friend class HandOff;
    JvmScope(HandOff& owner, bool live) : owner_(owner), live_(live) {}
    HandOff& owner_;
    const bool live_;
  };

  HandOff() = default;
  HandOff(const HandOff&) = delete;
  HandOff& operator=(const HandOff&) = delete;

  // Before the writer starts. Without a resolver every load is resolved in its callback.
  void SetResolver(LoadResolver* resolver) { resolver_ = resolver; }
  LoadResolver* resolver() const { return resolver_; }
  // Before the writer starts: how to wake it when there is something to Serve.
  void SetWaker(std::function<void()> wake) { wake_ = std::move(wake); }

  // --- callbacks (any JVM thread) ---
  // `compiled_load`: a CompiledMethodLoad, which may be deferred.
  Ticket Enter(bool compiled_load);
  int in_flight() const { return in_flight_.load(std::memory_order_acquire); }

  // --- the agent's lifecycle ---
  void BeginDeferring();
  // Final. Waits at most `timeout_ms` for the writer; false when it did not get there in time
  // (it still resolves every deferred load before it detaches).
  bool StopDeferring(uint32_t timeout_ms);
  // From the end of VMDeath: every later JvmScope is not live. Waits at most `timeout_ms` for
  // the scopes open now; false on timeout.
  bool CloseJvm(uint32_t timeout_ms);
  // Any thread, around calls into the JVM.
  JvmScope EnterJvm();
  // Refuses every event from now on. true for the first caller only.
  bool Close();
  bool closed() const { return closed_.load(std::memory_order_acquire); }
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
  // When the writer thread ends: detaches if attached and never defers again.
  void DetachAtExit();

 private:
  enum State : int {
    kResolveInCallback,  // the writer is not attached (yet)
    kDeferring,          // compiled loads go to the writer
    kStopped,            // final: compiled loads are resolved in callbacks again
  };
  void Wake();
  void Leave(bool deferring);

  LoadResolver* resolver_ = nullptr;
  std::function<void()> wake_;
  // What every callback reads, on its own cache line.
  alignas(64) std::atomic<int> state_{kResolveInCallback};
  std::atomic<bool> closed_{false};
  std::atomic<int> in_flight_{0};
  // Callbacks between reading kDeferring and queueing their load (sequentially consistent with
  // state_, so the writer seeing 0 after kStopped knows no deferred load is still coming).
  std::atomic<int> deferring_{0};
  // JvmScopes open, and whether CloseJvm has run (sequentially consistent with each other, as
  // deferring_ with state_).
  std::atomic<int> jvm_scopes_{0};
  std::atomic<bool> jvm_closed_{false};

  alignas(64) mutable std::mutex mutex_;
  std::condition_variable done_;
  // Guarded by mutex_.
  bool attach_requested_ = false;
  bool stop_requested_ = false;
  bool stopped_ = false;  // the writer resolved what was deferred and detached (or never attached)
  bool attached_ = false;  // written on the writer thread only
};

}  // namespace jitdump_agent
