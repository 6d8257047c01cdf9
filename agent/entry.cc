// The three symbols the JVM looks up. Each forwards to the agent and never lets anything
// (an exception, an abort) cross into the JVM.
#include <jni.h>

#include "agent/jvmti/agent.h"

extern "C" {

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* /*reserved*/) {
  return jitdump_agent::OnLoad(vm, options);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void* /*reserved*/) {
  return jitdump_agent::OnAttach(vm, options);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM* vm) { jitdump_agent::OnUnload(vm); }

}  // extern "C"
