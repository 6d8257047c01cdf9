// JVMTI glue: the event callbacks. Each takes a ticket from the process-wide lifecycle
// (lifecycle.h), which says whether a session takes the event and which; then it copies what
// is valid only during the callback into one code event and queues it (code_event.h): a
// compiled load with its scope chains for the writer to resolve, or, where the writer cannot
// (before it attaches at VMInit, from VMDeath on, resolve=callback), with the names and lines
// the callback resolved itself. No file I/O, no waiting for the writer, and nothing thrown
// escapes into the JVM.
#pragma once

#include <jvmti.h>

#include "agent/core/lifecycle.h"
#include "agent/jvmti/session.h"
#include "agent/core/wait_budget.h"

namespace jitdump_agent {

// Installs the event callbacks (bound to session.lifecycle) and enables the events on
// `session.jvmti`. `vm_death` runs the agent's VMDeath transition.
jvmtiError EnableEvents(Session& session, void (*vm_death)());
// Disables every event EnableEvents enabled: HotSpot stops building them (its own cost goes
// too). A callback HotSpot has begun may still arrive afterwards (JDK-8373645).
jvmtiError DisableEvents(jvmtiEnv* jvmti);
// Replays already compiled and generated code (late attach), on the calling thread.
void ReplayExistingCode(Session& session);

// The callbacks' bodies: each takes its ticket from `lifecycle` and feeds the ticket's session
// (tests drive them with a lifecycle and session of their own).
void HandleCompiledMethodLoad(Lifecycle& lifecycle, uint64_t timestamp, jmethodID method, jint code_size,
                              const void* code_addr, const void* compile_info);
void HandleDynamicCodeGenerated(Lifecycle& lifecycle, uint64_t timestamp, const char* name, const void* address,
                                jint length);
void HandleCompiledMethodUnload(Lifecycle& lifecycle, uint64_t timestamp, jmethodID method, const void* code_addr);
// ClassPrepare (with the method table only): the class pinned for the writer to describe.
void HandleClassPrepare(Lifecycle& lifecycle, uint64_t timestamp, JNIEnv* jni, jclass klass);
// VMInit: loads are deferred to the writer once it has attached.
void HandleVMInit(Lifecycle& lifecycle);
// VMDeath's part for the active session `s`: replays the stubs HotSpot never posted live, stops
// deferring (the writer resolves what it holds) and closes the JVM, all within `budget`.
void HandleVMDeath(Session& s, const WaitBudget& budget);

}  // namespace jitdump_agent
