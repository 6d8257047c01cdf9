// Small helpers for JVMTI-allocated memory and errors.
#pragma once

#include <jvmti.h>

namespace jitdump_agent {

// Owns memory JVMTI allocated for us and gives it back with Deallocate.
template <typename T>
class JvmtiPtr {
 public:
  explicit JvmtiPtr(jvmtiEnv* jvmti) : jvmti_(jvmti) {}
  ~JvmtiPtr() {
    if (ptr_ != nullptr) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(ptr_));
  }
  JvmtiPtr(const JvmtiPtr&) = delete;
  JvmtiPtr& operator=(const JvmtiPtr&) = delete;
  T** out() { return &ptr_; }
  T* get() const { return ptr_; }

 private:
  jvmtiEnv* jvmti_;
  T* ptr_ = nullptr;
};

// Outcomes that are normal for some methods (lambda proxies, natives, classes compiled
// without debug information) rather than failures.
inline bool IsExpectedAbsence(jvmtiError error) {
  return error == JVMTI_ERROR_ABSENT_INFORMATION || error == JVMTI_ERROR_NATIVE_METHOD;
}

}  // namespace jitdump_agent
