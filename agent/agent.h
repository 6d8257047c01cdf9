// JVMTI glue: the agent's lifecycle, behind the three exported entry points (entry.cc).
#pragma once

#include <jni.h>

namespace jitdump_agent {

jint OnLoad(JavaVM* vm, char* options) noexcept;
jint OnAttach(JavaVM* vm, char* options) noexcept;
void OnUnload(JavaVM* vm) noexcept;

}  // namespace jitdump_agent
