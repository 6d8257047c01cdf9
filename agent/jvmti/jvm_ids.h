// JVMTI glue: the core's opaque method ids and class pins (code_event.h) are a jmethodID's and a
// JNI global reference's bits. Only glue files convert; the core never looks inside.
#pragma once

#include <jni.h>

#include <cstdint>

#include "agent/core/code_event.h"

namespace jitdump_agent {

inline MethodId IdOf(jmethodID method) { return reinterpret_cast<uintptr_t>(method); }
inline jmethodID JMethodOf(MethodId method) { return reinterpret_cast<jmethodID>(static_cast<uintptr_t>(method)); }
inline ClassPin PinOf(jobject global_ref) { return reinterpret_cast<uintptr_t>(global_ref); }
inline jobject JObjectOf(ClassPin pin) { return reinterpret_cast<jobject>(static_cast<uintptr_t>(pin)); }

}  // namespace jitdump_agent
