// JVMTI glue: the writer thread's side of deferred loads (load_resolver.h). Attaches the writer
// thread to the JVM as a daemon (JVMTI answers only threads the JVM knows), resolves each
// deferred load with a method cache of its own, releases the class pin the callback took, and
// detaches when the hand-off says nothing deferred can still arrive.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include "agent/jvmti_method_lookup.h"
#include "agent/load_resolver.h"

namespace jitdump_agent {

class JvmResolver final : public LoadResolver {
 public:
  JvmResolver(JavaVM* vm, jvmtiEnv* jvmti, const Options& options, bool line_tables, bool lines, Stats& stats)
      : vm_(vm), stats_(stats), naming_(jvmti, options, line_tables, lines, stats) {}

  bool Attach() override;
  void Detach() override;
  bool Resolve(const CodeEvent& load, LoadNames* names) override;
  void Forget(MethodId method) override;

 private:
  JavaVM* const vm_;
  Stats& stats_;
  JvmtiLoadNaming naming_;  // the writer thread's only
  JNIEnv* env_ = nullptr;
};

}  // namespace jitdump_agent
