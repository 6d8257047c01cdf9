// A CompiledMethodLoad copied out of its callback so that the writer thread, not the JVM
// thread, pays for the names and lines (see resolver.h). The callback copies what is valid only
// while it runs (the code bytes and the scope chains of compile_info: jmethodIDs and bcis) into
// one BatchKind::kDeferredLoad batch; the writer reads it back as the same CompiledLoadEvent
// and resolves it with BuildCompiledLoad. Plain C++: no JVMTI call here.
//
// Payload: DeferredLoadHeader, ScopePc[pc_count], ScopeFrame[frame_count], code bytes (when
// the event had them), all naturally aligned. The timestamp, the code range and `replayed`
// travel in the Batch's own fields.
#pragma once

#include "agent/compiled_load.h"
#include "agent/record_queue.h"

namespace jitdump_agent {

// nullptr when the batch could not be allocated (counted by the queue). `pin`, carried along
// for the resolver, is a JNI global reference that keeps the method's class loaded until then.
Batch* BuildDeferredLoad(RecordQueue& queue, const CompiledLoadEvent& event, jobject pin = nullptr);

// The event a deferred batch holds; its spans and code point into the batch.
CompiledLoadEvent ReadDeferredLoad(const Batch& batch);
jobject DeferredLoadPin(const Batch& batch);

}  // namespace jitdump_agent
