// The writer thread's side of deferred loads (JVMTI glue): attaches the writer thread to the
// JVM as a daemon (JVMTI answers only threads the JVM knows), resolves each deferred load with
// a method cache of its own, and turns deferral on once it can and off when it detaches.
#pragma once

#include <jni.h>

#include "agent/method_cache.h"
#include "agent/writer.h"

namespace jitdump_agent {

struct AgentState;

class JvmResolver final : public LoadResolver {
 public:
  JvmResolver(JavaVM* vm, AgentState& state);
  bool Attach() override;
  Batch* Resolve(Batch& deferred) override;
  void Detach() override;

 private:
  JavaVM* const vm_;
  AgentState& state_;
  MethodCache cache_;  // used by the writer thread only
  JNIEnv* env_ = nullptr;
};

}  // namespace jitdump_agent
