// JVMTI glue: the writer thread's resolver of deferred loads (jvm_resolver.h).
#include "agent/jvmti/jvm_resolver.h"

#include "agent/jvmti/class_pin.h"
#include "agent/core/log.h"

namespace jitdump_agent {

bool JvmResolver::Attach() {
  // A daemon: the JVM never waits for it at exit. It shows in thread dumps under this name.
  char name[] = "jitdumpagent writer";
  JavaVMAttachArgs args{JNI_VERSION_1_6, name, nullptr};
  JNIEnv* env = nullptr;
  if (vm_->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK || env == nullptr) {
    Log(LogLevel::kInfo, "cannot attach the writer thread to the JVM; names and lines stay resolved in callbacks");
    return false;
  }
  env_ = env;
  code_list_.SetEnv(env);
  return true;
}

bool JvmResolver::Resolve(const CodeEvent& load, LoadNames* names) {
  // GetMethodDeclaringClass hands out JNI local references. Inside a callback the JVM frees
  // them on return; on an attached thread that never returns to Java they would pile up.
  const bool framed = env_ != nullptr && env_->PushLocalFrame(16) == JNI_OK;
  bool resolved = false;
  try {
    auto lock = naming_.cache.Lock();
    naming_.cache.BeginCallback();
    *names = naming_.namer.Name(naming_.cache,
                                {load.method, load.code_addr, load.code_size, load.timestamp, load.pcs, load.frames});
    resolved = true;
  } catch (...) {
    stats_.lost_allocation.Add();
  }
  if (framed) env_->PopLocalFrame(nullptr);
  ReleaseClassPin(vm_, load.pin);  // resolved (or given up): the class may go
  return resolved;
}

void JvmResolver::Forget(MethodId method) {
  auto lock = naming_.cache.Lock();
  naming_.cache.Evict(method);
}

void JvmResolver::Detach() {
  if (env_ == nullptr) return;
  vm_->DetachCurrentThread();
  env_ = nullptr;
  code_list_.SetEnv(nullptr);
}

}  // namespace jitdump_agent
