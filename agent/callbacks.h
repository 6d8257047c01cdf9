// JVMTI glue: the event callbacks. Each copies what is valid only during the callback into one
// code event and queues it (code_event.h): a compiled load with its scope chains for the
// writer to resolve, or, where the writer cannot (before it attaches at VMInit, from VMDeath on,
// resolve=callback), with the names and lines the callback resolved itself. No file I/O, no
// waiting for the writer, and nothing thrown escapes into the JVM. The hand-off (hand_off.h)
// decides which, and refuses events once the agent has closed.
#pragma once

#include <jvmti.h>

#include "agent/agent_state.h"

namespace jitdump_agent {

// Installs the event callbacks (bound to State()) and enables the events on `state.jvmti`.
jvmtiError EnableEvents(AgentState& state);
// Replays already compiled and generated code (late attach), on the calling thread.
void ReplayExistingCode(AgentState& state);

// The callbacks' bodies, for a given state (tests drive them with one of their own).
void HandleCompiledMethodLoad(AgentState& s, uint64_t timestamp, jmethodID method, jint code_size,
                              const void* code_addr, const void* compile_info);
void HandleDynamicCodeGenerated(AgentState& s, uint64_t timestamp, const char* name, const void* address, jint length);
void HandleCompiledMethodUnload(AgentState& s, uint64_t timestamp, jmethodID method, const void* code_addr);
// ClassPrepare (with the method table only): the class pinned for the writer to describe.
void HandleClassPrepare(AgentState& s, uint64_t timestamp, JNIEnv* jni, jclass klass);
// VMInit: loads are deferred to the writer once it has attached.
void HandleVMInit(AgentState& s);
// VMDeath: replays the stubs HotSpot never posted live, then stops deferring.
void HandleVMDeath(AgentState& s);

}  // namespace jitdump_agent
