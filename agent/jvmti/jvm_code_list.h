// JVMTI glue: Compiler.codelist read through HotSpot's management interface (JMM), for
// IntrinsicNamer (intrinsic_names.h). JVM_GetManagement, exported by libjvm.so, hands out the
// JMM function table that libmanagement and the DiagnosticCommand MBean use; its
// ExecuteDiagnosticCommand runs a diagnostic command on the calling thread and returns the
// output as a Java string: no attach socket, no Java code run. The calling thread must be
// attached to the JVM (the writer thread) and the JVM live: unlike JVMTI, JMM functions do not
// check the phase, and a thread entering a JVM that has exited blocks forever. The writer calls
// it only inside the lifecycle's JVM scope (lifecycle.h), which VMDeath closes before it returns.
#pragma once

#include <jni.h>

#include <string>

#include "agent/core/intrinsic_names.h"

namespace jitdump_agent {

class JmmCodeList final : public CodeListSource {
 public:
  // The attached thread's JNIEnv (null once detached).
  void SetEnv(JNIEnv* env) { env_ = env; }
  bool Read(std::string* text) override;

  using Execute = jstring(JNICALL*)(JNIEnv*, jstring);

 private:
  // Finds ExecuteDiagnosticCommand in the JMM table of a version whose layout is known.
  Execute Lookup();

  JNIEnv* env_ = nullptr;
  bool looked_up_ = false;
  Execute execute_ = nullptr;
};

}  // namespace jitdump_agent
