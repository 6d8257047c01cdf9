#include "agent/jvm_resolver.h"

#include "agent/agent_state.h"
#include "agent/compiled_load.h"
#include "agent/deferred_load.h"
#include "agent/log.h"

namespace jitdump_agent {

JvmResolver::JvmResolver(JavaVM* vm, AgentState& state)
    : vm_(vm),
      state_(state),
      cache_(state.jvmti, state.options.names, state.line_tables, state.options.cache_entries, state.stats) {}

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
  int expected = AgentState::kResolveInCallback;  // unless VM death already stopped deferring
  state_.defer_state.compare_exchange_strong(expected, AgentState::kDeferring, std::memory_order_seq_cst);
  return true;
}

Batch* JvmResolver::Resolve(Batch& deferred) {
  const CompiledLoadContext context{cache_, state_.queue, state_.stats, state_.options, state_.lines, state_.pid};
  // GetMethodDeclaringClass hands out JNI local references. Inside a callback the JVM frees
  // them on return; on an attached thread that never returns to Java they would pile up.
  const bool framed = env_ != nullptr && env_->PushLocalFrame(16) == JNI_OK;
  Batch* batch = nullptr;
  try {
    batch = BuildCompiledLoad(context, ReadDeferredLoad(deferred), &deferred);
  } catch (...) {
    state_.stats.lost_allocation.Add();
  }
  if (framed) env_->PopLocalFrame(nullptr);
  // Resolved: the class may go (see PinDeclaringClass in callbacks.cc).
  if (const jobject pin = DeferredLoadPin(deferred); pin != nullptr && env_ != nullptr) env_->DeleteGlobalRef(pin);
  return batch;
}

void JvmResolver::Detach() {
  // Loads arriving from now on are resolved in their callbacks.
  state_.defer_state.store(AgentState::kStopped, std::memory_order_seq_cst);
  if (env_ == nullptr) return;
  vm_->DetachCurrentThread();
  env_ = nullptr;
}

}  // namespace jitdump_agent
