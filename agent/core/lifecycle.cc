// The agent's lifecycle (lifecycle.h).
#include "agent/core/lifecycle.h"

#include <unistd.h>

#include <chrono>

namespace jitdump_agent {

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kDormant: return "dormant";
    case Phase::kNaming: return "naming";
    case Phase::kDeferring: return "deferring";
    case Phase::kStopping: return "stopping";
    case Phase::kDying: return "dying";
    case Phase::kDead: return "dead";
    case Phase::kClosed: return "closed";
  }
  return "?";
}

const char* StopCauseName(StopCause cause) {
  switch (cause) {
    case StopCause::kNone: return "none";
    case StopCause::kRequested: return "stop";
    case StopCause::kStopAfter: return "stop_after";
    case StopCause::kDumpDeleted: return "dump_deleted";
    case StopCause::kReplaced: return "replaced";
    case StopCause::kVmDeath: return "vm_death";
    case StopCause::kFailedStart: return "failed_start";
  }
  return "?";
}

// The diagram of lifecycle.h, as a table: every transition the agent makes is one of these.
bool Lifecycle::Allowed(Phase from, Phase to) {
  using P = Phase;
  switch (to) {
    // Start; or the writer detached without a stop (it ends: a failed start's clean-up)
    case P::kNaming: return from == P::kDormant || from == P::kDeferring;
    case P::kDeferring: return from == P::kNaming;                        // the writer attached
    case P::kStopping: return from == P::kNaming || from == P::kDeferring;  // Stop
    case P::kDormant: return from == P::kStopping;                        // the writer closed the session
    case P::kDying: return from == P::kNaming || from == P::kDeferring;   // VMDeath
    case P::kDead: return from == P::kDying || from == P::kNaming || from == P::kDeferring;  // VMDeath returns
    case P::kClosed: return from != P::kClosed;  // Agent_OnUnload; VM death with no session or a stop unfinished
  }
  return false;
}

void Lifecycle::SetWaker(const void* owner, std::function<void()> wake) {
  std::lock_guard<std::mutex> lock(waker_mutex_);
  waker_owner_ = owner;
  wake_ = std::move(wake);
}

void Lifecycle::ClearWaker(const void* owner) {
  std::lock_guard<std::mutex> lock(waker_mutex_);
  if (waker_owner_ != owner) return;
  waker_owner_ = nullptr;
  wake_ = nullptr;
}

bool Lifecycle::MoveLocked(std::initializer_list<Phase> from, Phase to) {
  const Phase now = phase_.load(std::memory_order_seq_cst);
  for (Phase f : from) {
    if (f == now && Allowed(f, to)) {
      phase_.store(to, std::memory_order_seq_cst);
      changed_.notify_all();
      return true;
    }
  }
  return false;
}

bool Lifecycle::Move(std::initializer_list<Phase> from, Phase to) {
  std::lock_guard<std::mutex> lock(mutex_);
  return MoveLocked(from, to);
}

Lifecycle::Ticket::~Ticket() { owner_.Leave(defer_); }

Lifecycle::Ticket Lifecycle::Enter(bool compiled_load) {
  // Counted before the phase is read: a transition that changed the phase and then waits for
  // in_flight to drain either finds this callback counted or this callback sees the new phase.
  in_flight_.fetch_add(1, std::memory_order_seq_cst);
  if (compiled_load && resolver_.load(std::memory_order_acquire) != nullptr) {
    // Likewise for deferring: StopDeferring either finds this callback counted, or this
    // callback finds the phase past kDeferring (both sequentially consistent).
    deferring_.fetch_add(1, std::memory_order_seq_cst);
    const Phase p = phase_.load(std::memory_order_seq_cst);
    if (p == Phase::kDeferring) return Ticket(*this, true, true, session_.load(std::memory_order_acquire));
    deferring_.fetch_sub(1, std::memory_order_seq_cst);
  }
  const Phase p = phase_.load(std::memory_order_seq_cst);
  void* session = session_.load(std::memory_order_acquire);
  switch (p) {
    case Phase::kNaming:
    case Phase::kDeferring:  // a stub or an unload, or no resolver
    case Phase::kDying:
    case Phase::kDead:
      return Ticket(*this, true, false, session);
    case Phase::kStopping:
    case Phase::kClosed:
      return Ticket(*this, false, false, session);
    case Phase::kDormant:
      break;
  }
  return Ticket(*this, false, false, nullptr);
}

void Lifecycle::Leave(bool deferring) {
  if (deferring) deferring_.fetch_sub(1, std::memory_order_seq_cst);
  in_flight_.fetch_sub(1, std::memory_order_seq_cst);
}

void Lifecycle::Wake() {
  std::lock_guard<std::mutex> lock(waker_mutex_);
  if (wake_) wake_();
}

bool Lifecycle::Start(void* session) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_.load(std::memory_order_seq_cst) != Phase::kDormant) return false;
  attach_requested_ = false;
  session_.store(session, std::memory_order_release);
  return MoveLocked({Phase::kDormant}, Phase::kNaming);
}

void Lifecycle::BeginDeferring() {
  if (resolver() == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_.load(std::memory_order_seq_cst) != Phase::kNaming) return;
    attach_requested_ = true;
  }
  Wake();  // outside mutex_: the writer takes its own lock, then this one (HasRequest)
}

bool Lifecycle::BeginStop() {
  const bool moved = Move({Phase::kNaming, Phase::kDeferring}, Phase::kStopping);
  if (moved) Wake();  // an attached writer resolves what was deferred and detaches
  return moved;
}

bool Lifecycle::EndStop(void* session, const std::function<void()>& before) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_.load(std::memory_order_seq_cst) != Phase::kStopping || session_.load() != session) return false;
  if (before) before();
  session_.store(nullptr, std::memory_order_release);
  return MoveLocked({Phase::kStopping}, Phase::kDormant);
}

Phase Lifecycle::AwaitPhaseOtherThan(Phase phase, uint32_t timeout_ms) const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [&] { return phase_.load(std::memory_order_seq_cst) != phase; });
  return phase_.load(std::memory_order_seq_cst);
}

bool Lifecycle::StopDeferring(uint32_t timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!MoveLocked({Phase::kNaming, Phase::kDeferring}, Phase::kDying)) return true;
  }
  Wake();
  std::unique_lock<std::mutex> lock(mutex_);
  // Nothing was ever deferred, or the writer has detached: nothing to wait for.
  return changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return !attached_; });
}

Lifecycle::JvmScope::~JvmScope() {
  if (live_) owner_.jvm_scopes_.fetch_sub(1, std::memory_order_seq_cst);
}

Lifecycle::JvmScope Lifecycle::EnterJvm() {
  // Counted before the phase is read: CloseJvm either waits for this scope or this scope sees
  // the JVM gone. Scopes that are not live do not count, so the ServiceThread's later callbacks
  // never keep CloseJvm waiting.
  jvm_scopes_.fetch_add(1, std::memory_order_seq_cst);
  if (JvmLive(phase_.load(std::memory_order_seq_cst))) return JvmScope(*this, true);
  jvm_scopes_.fetch_sub(1, std::memory_order_seq_cst);
  return JvmScope(*this, false);
}

bool Lifecycle::CloseJvm(uint32_t timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!MoveLocked({Phase::kDying, Phase::kNaming, Phase::kDeferring}, Phase::kDead)) {
      MoveLocked({Phase::kDormant, Phase::kStopping}, Phase::kClosed);
    }
  }
  Wake();
  // Scopes are short (one load's lookups); poll rather than make every scope signal.
  for (uint32_t waited_us = 0; jvm_scopes_.load(std::memory_order_seq_cst) > 0; waited_us += 100) {
    if (waited_us >= timeout_ms * 1000) return false;
    ::usleep(100);
  }
  return true;
}

bool Lifecycle::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Phase p = phase_.load(std::memory_order_seq_cst);
  return MoveLocked({p}, Phase::kClosed);
}

bool Lifecycle::AwaitIdle(uint32_t timeout_ms) const {
  for (uint32_t waited = 0; in_flight() > 0; ++waited) {
    if (waited >= timeout_ms) return false;
    ::usleep(1000);
  }
  return true;
}

bool Lifecycle::HasRequest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return attach_requested_ || (attached_ && !WriterMayStayAttached(phase_.load(std::memory_order_seq_cst)));
}

bool Lifecycle::Serve(const std::function<void()>& drain) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (attach_requested_) {
    attach_requested_ = false;
    LoadResolver* resolver = this->resolver();
    if (!attached_ && resolver != nullptr && phase_.load(std::memory_order_seq_cst) == Phase::kNaming) {
      lock.unlock();
      const bool attached = resolver->Attach();
      lock.lock();
      attached_ = attached;
      // Unless a stop or VM death came meanwhile: then the writer detaches again below.
      if (attached) MoveLocked({Phase::kNaming}, Phase::kDeferring);
    }
  }
  if (!attached_ || WriterMayStayAttached(phase_.load(std::memory_order_seq_cst))) return false;
  // A callback that read kDeferring may still be on its way to the queue: detaching now would
  // leave its load to a thread JVMTI no longer answers.
  if (deferring_.load(std::memory_order_seq_cst) > 0) return true;
  lock.unlock();
  // Every deferred load is queued: resolve them all while the thread is attached.
  drain();
  resolver()->Detach();
  lock.lock();
  attached_ = false;
  changed_.notify_all();
  return false;
}

void Lifecycle::DetachAtExit(const std::function<void()>& drain, uint32_t timeout_ms) {
  for (uint32_t waited = 0; deferring_.load(std::memory_order_seq_cst) > 0 && waited < timeout_ms; ++waited) {
    ::usleep(1000);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  const bool attached = attached_;
  attach_requested_ = false;
  MoveLocked({Phase::kDeferring}, Phase::kNaming);  // never defer to a writer that is gone
  lock.unlock();
  if (attached) {
    if (drain) drain();
    resolver()->Detach();  // an attached thread must never end attached
  }
  lock.lock();
  attached_ = false;
  changed_.notify_all();
}

}  // namespace jitdump_agent
