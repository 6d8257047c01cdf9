// The hand-off between callbacks and the writer (hand_off.h).
#include "agent/hand_off.h"

#include <unistd.h>

#include <chrono>

namespace jitdump_agent {

HandOff::Ticket::~Ticket() { owner_.Leave(defer_); }

HandOff::Ticket HandOff::Enter(bool compiled_load) {
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  if (closed_.load(std::memory_order_acquire)) return Ticket(*this, false, false);
  if (compiled_load && resolver_ != nullptr) {
    // Counted before the state is read: StopDeferring either finds this callback counted, or
    // this callback finds the state stopped (both sequentially consistent).
    deferring_.fetch_add(1, std::memory_order_seq_cst);
    if (state_.load(std::memory_order_seq_cst) == kDeferring) return Ticket(*this, true, true);
    deferring_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return Ticket(*this, true, false);
}

void HandOff::Leave(bool deferring) {
  if (deferring) deferring_.fetch_sub(1, std::memory_order_seq_cst);
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
}

void HandOff::Wake() {
  if (wake_) wake_();
}

void HandOff::BeginDeferring() {
  if (resolver_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    attach_requested_ = true;
  }
  Wake();  // outside mutex_: the writer takes its own lock, then this one (HasRequest)
}

bool HandOff::StopDeferring(uint32_t timeout_ms) {
  if (resolver_ == nullptr) return true;
  const int previous = state_.exchange(kStopped, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  Wake();
  // Nothing was ever deferred: the writer detaches (if it attached at all) on its own time.
  if (previous != kDeferring) return true;
  std::unique_lock<std::mutex> lock(mutex_);
  return done_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return stopped_; });
}

HandOff::JvmScope::~JvmScope() {
  if (live_) owner_.jvm_scopes_.fetch_sub(1, std::memory_order_seq_cst);
}

HandOff::JvmScope HandOff::EnterJvm() {
  // Counted before the flag is read: CloseJvm either waits for this scope or this scope sees it
  // closed. Scopes that are not live do not count, so the ServiceThread's later callbacks never
  // keep CloseJvm waiting.
  jvm_scopes_.fetch_add(1, std::memory_order_seq_cst);
  if (!jvm_closed_.load(std::memory_order_seq_cst)) return JvmScope(*this, true);
  jvm_scopes_.fetch_sub(1, std::memory_order_seq_cst);
  return JvmScope(*this, false);
}

bool HandOff::CloseJvm(uint32_t timeout_ms) {
  jvm_closed_.store(true, std::memory_order_seq_cst);
  // Scopes are short (one load's lookups); poll rather than make every scope signal.
  for (uint32_t waited_us = 0; jvm_scopes_.load(std::memory_order_seq_cst) > 0; waited_us += 100) {
    if (waited_us >= timeout_ms * 1000) return false;
    ::usleep(100);
  }
  return true;
}

bool HandOff::Close() { return !closed_.exchange(true, std::memory_order_acq_rel); }

bool HandOff::AwaitIdle(uint32_t timeout_ms) const {
  for (uint32_t waited = 0; in_flight() > 0; ++waited) {
    if (waited >= timeout_ms) return false;
    ::usleep(1000);
  }
  return true;
}

bool HandOff::HasRequest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return attach_requested_ || (stop_requested_ && !stopped_);
}

bool HandOff::Serve(const std::function<void()>& drain) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (attach_requested_) {
    attach_requested_ = false;
    if (!stop_requested_ && !attached_ && resolver_ != nullptr) {
      lock.unlock();
      const bool attached = resolver_->Attach();
      lock.lock();
      attached_ = attached;
      int expected = kResolveInCallback;  // unless VM death stopped deferring meanwhile
      if (attached) state_.compare_exchange_strong(expected, kDeferring, std::memory_order_seq_cst);
    }
  }
  if (!stop_requested_ || stopped_) return false;
  // A callback that read kDeferring may still be on its way to the queue: detaching now would
  // leave its load to a thread JVMTI no longer answers.
  if (deferring_.load(std::memory_order_seq_cst) > 0) return true;
  const bool attached = attached_;
  lock.unlock();
  // Every deferred load is queued: resolve them all while the thread is attached.
  if (attached) drain();
  if (attached) resolver_->Detach();
  lock.lock();
  attached_ = false;
  stopped_ = true;
  done_.notify_all();
  return false;
}

void HandOff::DetachAtExit() {
  state_.store(kStopped, std::memory_order_seq_cst);
  std::unique_lock<std::mutex> lock(mutex_);
  const bool attached = attached_;
  attached_ = false;
  lock.unlock();
  if (attached) resolver_->Detach();  // an attached thread must never end attached
  lock.lock();
  stopped_ = true;
  done_.notify_all();
}

}  // namespace jitdump_agent
