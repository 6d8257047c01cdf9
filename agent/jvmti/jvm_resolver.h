// JVMTI glue: the writer thread's side of deferred loads (load_resolver.h). Attaches the writer
// thread to the JVM as a daemon (JVMTI answers only threads the JVM knows), resolves each
// deferred load with a method cache of its own, releases the class pin the callback took, and
// detaches when the lifecycle says nothing deferred can still arrive. Names method-handle
// intrinsics from the JVM's code list (intrinsic_names.h), which only this thread can read.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include "agent/core/clock.h"
#include "agent/jvmti/jvm_code_list.h"
#include "agent/jvmti/jvmti_method_lookup.h"
#include "agent/core/load_resolver.h"

namespace jitdump_agent {

class JvmResolver final : public LoadResolver {
 public:
  JvmResolver(JavaVM* vm, jvmtiEnv* jvmti, const Options& options, bool line_tables, bool lines, Stats& stats)
      : vm_(vm),
        stats_(stats),
        naming_(jvmti, options, line_tables, lines, stats),
        intrinsics_(code_list_, options.names, stats, MonotonicNanos, ThreadCpuNanos),
        read_code_list_(options.intrinsics_from_code_list) {}

  bool Attach() override;
  void Detach() override;
  bool Resolve(const CodeEvent& load, LoadNames* names) override;
  IntrinsicAnswer NameIntrinsic(uint64_t code_addr, uint64_t posted, bool force) override {
    if (!read_code_list_) return {};
    const IntrinsicName* name = intrinsics_.Name(code_addr, posted, force);
    return {name, name == nullptr};
  }
  void Forget(MethodId method) override;
  void HandNamesTo(MethodCache& cache, uint32_t max_wait_ms) override {
    (void)cache.TakeEntriesOf(naming_.cache, max_wait_ms);
  }

 private:
  JavaVM* const vm_;
  Stats& stats_;
  JvmtiLoadNaming naming_;  // the writer thread's only
  JmmCodeList code_list_;   // method-handle intrinsics' names, read on this thread while attached
  IntrinsicNamer intrinsics_;
  const bool read_code_list_;  // intrinsics=codelist
  JNIEnv* env_ = nullptr;
};

}  // namespace jitdump_agent
