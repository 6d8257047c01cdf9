// JVMTI glue: keeps the class of a deferred load's method loaded until the writer has looked
// the method up. Without the pin a class unloaded in between answers INVALID_METHODID and its
// load gets no name (485 of 100k ScaleGen loads, whose classes die young). Pinning the root's
// class covers the methods its code inlined too: their loaders are recorded as dependencies of
// the root's loader when its constant pool resolves them, and hidden classes are reached from
// its constant pool cache.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include "agent/core/code_event.h"

namespace jitdump_agent {

// A JNI global reference to the method's declaring class, from a thread the JVM knows (a
// callback's); 0 (and the load merely risks its name) when JNI refuses.
ClassPin PinDeclaringClass(JavaVM* vm, jvmtiEnv* jvmti, jmethodID method);
// From a thread the JVM knows: the callback that could not queue its load, or the attached
// writer once it has resolved it.
void ReleaseClassPin(JavaVM* vm, ClassPin pin);

}  // namespace jitdump_agent
