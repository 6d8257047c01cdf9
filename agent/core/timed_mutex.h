// A mutex whose lock can give up after a while, built on std::mutex and a condition variable.
// std::timed_mutex would do, but libstdc++ 12 waits in it with pthread_mutex_clocklock, which
// GCC 12's ThreadSanitizer does not intercept: TSan then sees every unlock after a timed lock as
// the unlock of a mutex nobody holds, and the sanitizer build of the lifecycle tests fails on
// correct code. Condition variables it does follow. Meets std::unique_lock's Lockable and
// TimedLockable needs (lock, try_lock, try_lock_for, unlock).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace jitdump_agent {

class TimedMutex {
 public:
  void lock() {
    std::unique_lock<std::mutex> guard(mutex_);
    released_.wait(guard, [this] { return !held_; });
    held_ = true;
  }
  bool try_lock() {
    std::lock_guard<std::mutex> guard(mutex_);
    if (held_) return false;
    held_ = true;
    return true;
  }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    if (!released_.wait_for(guard, timeout, [this] { return !held_; })) return false;
    held_ = true;
    return true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      held_ = false;
    }
    released_.notify_one();
  }

 private:
  std::mutex mutex_;  // guards held_ only, never held for longer than a check
  std::condition_variable released_;
  bool held_ = false;
};

}  // namespace jitdump_agent
