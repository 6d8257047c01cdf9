// JVMTI glue: the event callbacks (callbacks.h): take the lifecycle's ticket, count each event
// in its session, copy what is valid only now into one code event, queue it.
#include "agent/jvmti/callbacks.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "agent/jvmti/class_pin.h"
#include "agent/core/clock.h"
#include "agent/core/code_event.h"
#include "agent/jvmti/compile_info.h"
#include "agent/jvmti/jvm_ids.h"
#include "agent/core/log.h"
#include "agent/core/names.h"

namespace jitdump_agent {
namespace {

thread_local bool t_replaying = false;
thread_local uint32_t t_tid = 0;
thread_local uint32_t t_cpu_sample = 0;
constexpr uint32_t kCpuSampleEvery = 16;

// gettid(2) is a real system call every time; a thread's id never changes, so ask once.
uint32_t CurrentTid() {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(::gettid());
  return t_tid;
}

// Counts the event; false when the lifecycle refused it because the session is stopping or the
// agent has closed (a refused code blob is counted as lost, so that for every kind events seen
// == written + duplicates + lost).
bool Count(Session& s, const Lifecycle::Ticket& ticket, Counter Stats::*event_counter, bool carries_code) {
  (s.stats.*event_counter).Add();
  if (t_replaying) s.stats.replayed_events.Add();
  if (ticket.accepted()) return true;
  if (carries_code) s.stats.lost_after_close.Add();
  return false;
}

// The scope chains of compile_info, copied out per thread (the capacity follows the largest
// method this thread has seen).
thread_local std::vector<ScopePc> t_pcs;
thread_local std::vector<ScopeFrame> t_frames;

void QueueCompiledLoad(Session& s, bool defer, uint64_t timestamp, jmethodID method, jint code_size,
                       const void* code_addr, const void* compile_info) {
  JvmtiLoadNaming& naming = *s.naming;
  CodeBlob blob;
  blob.timestamp = timestamp;
  blob.tid = CurrentTid();
  blob.code_addr = reinterpret_cast<uintptr_t>(code_addr);
  blob.code_size = code_size > 0 ? static_cast<uint64_t>(code_size) : 0;
  blob.code = s.options.code ? code_addr : nullptr;
  blob.replayed = t_replaying;

  const bool scopes = naming.namer.wants_scopes();
  if (defer) {
    const ClassPin pin = PinDeclaringClass(s.vm, s.jvmti, method);
    // The chains go straight from compile_info into the event.
    const ScopeCounts counts = scopes ? CountScopes(compile_info) : ScopeCounts{};
    CodeEvent* event = NewDeferredLoad(s.queue, blob, IdOf(method), counts, FillScopes, compile_info, pin);
    if (event != nullptr && s.queue.Push(event)) {  // a failed push frees the event
      s.stats.deferred_loads.Add();
    } else {
      ReleaseClassPin(s.vm, pin);  // nobody else will: the class must not stay loaded forever
    }
    return;
  }
  t_pcs.clear();
  t_frames.clear();
  if (scopes) CollectScopes(compile_info, t_pcs, t_frames);
  CodeEvent* event = nullptr;
  {
    // VMDeath waits for this scope before it returns, so the lookups below do not see the JVM
    // die halfway (scopes entered after that still try: JVMTI answers until the phase is DEAD).
    const Lifecycle::JvmScope jvm = s.lifecycle.EnterJvm();
    auto lock = naming.cache.Lock();
    naming.cache.BeginCallback();
    const LoadNames names = naming.namer.Name(
        naming.cache, {IdOf(method), blob.code_addr, blob.code_size, blob.timestamp, t_pcs, t_frames});
    event = NewNamedLoad(s.queue, EventKind::kCompiledLoad, blob, names);
  }
  if (event != nullptr) s.queue.Push(event);
}

// The process's lifecycle (EnableEvents sets it; it is never freed) and the agent's VMDeath.
std::atomic<Lifecycle*> g_lifecycle{nullptr};
std::atomic<void (*)()> g_vm_death{nullptr};

void JNICALL OnCompiledMethodLoad(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr,
                                  jint /*map_length*/, const jvmtiAddrLocationMap* /*map*/,
                                  const void* compile_info) {
  const uint64_t timestamp = MonotonicNanos();
  if (Lifecycle* l = g_lifecycle.load(std::memory_order_acquire)) {
    HandleCompiledMethodLoad(*l, timestamp, method, code_size, code_addr, compile_info);
  }
}

void JNICALL OnDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  const uint64_t timestamp = MonotonicNanos();
  if (Lifecycle* l = g_lifecycle.load(std::memory_order_acquire)) {
    HandleDynamicCodeGenerated(*l, timestamp, name, address, length);
  }
}

void JNICALL OnCompiledMethodUnload(jvmtiEnv*, jmethodID method, const void* code_addr) {
  const uint64_t timestamp = MonotonicNanos();
  if (Lifecycle* l = g_lifecycle.load(std::memory_order_acquire)) {
    HandleCompiledMethodUnload(*l, timestamp, method, code_addr);
  }
}

void JNICALL OnClassPrepare(jvmtiEnv*, JNIEnv* jni, jthread, jclass klass) {
  const uint64_t timestamp = MonotonicNanos();
  if (Lifecycle* l = g_lifecycle.load(std::memory_order_acquire)) HandleClassPrepare(*l, timestamp, jni, klass);
}

// The JVM can now run the Java code that attaching a thread needs.
void JNICALL OnVMInit(jvmtiEnv*, JNIEnv*, jthread) {
  if (Lifecycle* l = g_lifecycle.load(std::memory_order_acquire)) HandleVMInit(*l);
}

void JNICALL OnVMDeath(jvmtiEnv*, JNIEnv*) {
  if (void (*vm_death)() = g_vm_death.load(std::memory_order_acquire)) vm_death();
}

}  // namespace

void HandleCompiledMethodLoad(Lifecycle& lifecycle, uint64_t timestamp, jmethodID method, jint code_size,
                              const void* code_addr, const void* compile_info) {
  const Lifecycle::Ticket ticket = lifecycle.Enter(/*compiled_load=*/true);
  Session* session = static_cast<Session*>(ticket.session());
  if (session == nullptr) return;  // dormant: no session takes it
  Session& s = *session;
  if (!Count(s, ticket, &Stats::compiled_method_load, /*carries_code=*/true)) return;
  // The thread CPU clock is a system call (about 1 µs here): sample one load in 16.
  const bool measure_cpu = !s.options.stats.empty() && (t_cpu_sample++ % kCpuSampleEvery) == 0;
  const uint64_t cpu_start = measure_cpu ? ThreadCpuNanos() : 0;
  try {
    QueueCompiledLoad(s, ticket.defer(), timestamp, method, code_size, code_addr, compile_info);
  } catch (...) {
    s.stats.lost_allocation.Add();
  }
  if (measure_cpu) s.stats.load_cpu.Record(ThreadCpuNanos() - cpu_start);
  const uint64_t elapsed = MonotonicNanos() - timestamp;
  s.stats.load_latency.Record(elapsed);
  if (code_size >= 0 && static_cast<uint64_t>(code_size) <= Stats::kSmallCode) {
    s.stats.load_latency_small.Record(elapsed);
  }
}

void HandleDynamicCodeGenerated(Lifecycle& lifecycle, uint64_t timestamp, const char* name, const void* address,
                                jint length) {
  const Lifecycle::Ticket ticket = lifecycle.Enter(/*compiled_load=*/false);
  Session* session = static_cast<Session*>(ticket.session());
  if (session == nullptr) return;
  Session& s = *session;
  if (!Count(s, ticket, &Stats::dynamic_code_generated, /*carries_code=*/length > 0)) return;
  if (length <= 0) {  // nothing a sample could land in
    s.stats.empty_blobs.Add();
    return;
  }
  try {
    // Named here, once: the dump's name, the perf map's spelling, and whether a replay of it
    // would only list a scratch buffer.
    const std::string stub_name = StubName(ModifiedUtf8ToUtf8(name != nullptr ? name : ""));
    const std::string perf_map_spelling = PerfMapStubName(stub_name);
    LoadNames names;
    names.name = stub_name;
    names.perf_map_name = perf_map_spelling.empty() ? names.name : perf_map_spelling;
    CodeBlob blob;
    blob.timestamp = timestamp;
    blob.tid = CurrentTid();
    blob.code_addr = reinterpret_cast<uintptr_t>(address);
    blob.code_size = static_cast<uint64_t>(length);
    blob.code = s.options.code ? address : nullptr;
    blob.replayed = t_replaying;
    if (CodeEvent* event = NewNamedLoad(s.queue, EventKind::kStub, blob, names, IsScratchBuffer(stub_name))) {
      s.queue.Push(event);
    }
  } catch (...) {
    s.stats.lost_allocation.Add();
  }
  s.stats.dynamic_latency.Record(MonotonicNanos() - timestamp);
}

void HandleCompiledMethodUnload(Lifecycle& lifecycle, uint64_t timestamp, jmethodID method, const void* code_addr) {
  const Lifecycle::Ticket ticket = lifecycle.Enter(/*compiled_load=*/false);
  Session* session = static_cast<Session*>(ticket.session());
  if (session == nullptr) return;
  Session& s = *session;
  if (!Count(s, ticket, &Stats::compiled_method_unload, /*carries_code=*/false)) return;
  try {
    // Never dereference code_addr or ask JVMTI about `method` here: both may be gone. The id
    // only keys the method caches: this one now, the writer's when it meets the unload.
    {
      auto lock = s.naming->cache.Lock();
      s.naming->cache.Evict(IdOf(method));
    }
    if (CodeEvent* event = NewUnload(s.queue, timestamp, reinterpret_cast<uintptr_t>(code_addr), IdOf(method))) {
      s.queue.Push(event);
    }
  } catch (...) {
  }
  s.stats.unload_latency.Record(MonotonicNanos() - timestamp);
}

void HandleClassPrepare(Lifecycle& lifecycle, uint64_t timestamp, JNIEnv* jni, jclass klass) {
  // Deferred like a compiled load: queued only while the writer is attached, which it stays
  // until the queue is drained (the pin is released there). Before it attaches, its first pass
  // over the loaded classes lists this one.
  const Lifecycle::Ticket ticket = lifecycle.Enter(/*compiled_load=*/true);
  Session* session = static_cast<Session*>(ticket.session());
  if (session == nullptr) return;  // dormant: no session takes it
  Session& s = *session;
  s.stats.class_prepare.Add();
  if (!ticket.accepted() || !ticket.defer() || jni == nullptr || klass == nullptr) return;
  try {
    const ClassPin pin = PinOf(jni->NewGlobalRef(klass));
    if (pin == 0) {
      s.stats.method_table_classes_lost.Add();
    } else if (CodeEvent* event = NewClassPrepared(s.queue, timestamp, pin);
               event == nullptr || !s.queue.Push(event)) {  // a failed push frees the event
      jni->DeleteGlobalRef(JObjectOf(pin));
      s.stats.method_table_classes_lost.Add();
    }
  } catch (...) {
    s.stats.method_table_classes_lost.Add();
  }
  s.stats.class_prepare_latency.Record(MonotonicNanos() - timestamp);
}

void HandleVMInit(Lifecycle& lifecycle) {
  try {
    lifecycle.BeginDeferring();
  } catch (...) {
  }
}

void HandleVMDeath(Session& s, const WaitBudget& budget) {
  try {
    // HotSpot never posts some blobs live (InlineCacheBuffer, jni_fast_Get*Field, ...). A replay
    // now reports every non-nmethod blob; the writer keeps only those covering addresses nothing
    // else describes, so samples in them resolve too. The VM is still live during VMDeath.
    t_replaying = true;
    (void)s.jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    t_replaying = false;
    // Loads from now on are resolved in their callbacks; the deferred ones are resolved by the
    // writer now, while JVMTI still answers (after VMDeath it returns WRONG_PHASE).
    if (!s.lifecycle.StopDeferring(budget.RemainingMs())) {
      Log(LogLevel::kWarn, "the writer did not resolve its queued loads within the %u ms the JVM waits for the "
          "agent (slow disk?); the loads it has not resolved when this callback returns are written as "
          "[unknown Java method]", kJvmWaitBudgetMs);
    }
    // Once this callback returns HotSpot turns the phase DEAD and JVMTI refuses name lookups: wait
    // for the lookups under way (a load the ServiceThread is naming), and keep the writer from
    // calling into the JVM from now on.
    (void)s.lifecycle.CloseJvm(budget.RemainingMs());
    // Loads HotSpot still posts once the phase is DEAD are mostly recompilations of methods the
    // writer has named before: its cache goes to the callbacks', whose lookups JVMTI refuses then.
    // (If the writer ran out of budget above it may still be resolving: both caches are locked.)
    LoadResolver* resolver = s.lifecycle.resolver();
    if (resolver != nullptr && s.naming != nullptr) resolver->HandNamesTo(s.naming->cache, budget.RemainingMs());
    // The files are closed in Agent_OnUnload, which HotSpot calls right after VMDeath on this
    // thread on every exit path that posts VMDeath. Closing here would refuse the loads the
    // ServiceThread still delivers while this callback runs (observed: dozens) and any event it
    // dequeued before the phase turned DEAD; by Agent_OnUnload events are disabled, so only
    // callbacks already in flight remain, and the close waits for those.
  } catch (...) {
  }
}

namespace {
constexpr jvmtiEvent kEvents[] = {JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                  JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH};
// Enabled only for a session that writes the method table (interp=on); always disabled.
constexpr jvmtiEvent kMethodTableEvent = JVMTI_EVENT_CLASS_PREPARE;
}  // namespace

jvmtiError EnableEvents(Session& session, void (*vm_death)()) {
  g_lifecycle.store(&session.lifecycle, std::memory_order_release);
  g_vm_death.store(vm_death, std::memory_order_release);
  jvmtiEventCallbacks callbacks{};
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.CompiledMethodUnload = OnCompiledMethodUnload;
  callbacks.DynamicCodeGenerated = OnDynamicCodeGenerated;
  callbacks.VMInit = OnVMInit;
  callbacks.VMDeath = OnVMDeath;
  // The method table (interp=on) follows the classes the JVM prepares.
  const bool method_table = session.method_source != nullptr;
  if (method_table) callbacks.ClassPrepare = OnClassPrepare;
  jvmtiError error = session.jvmti->SetEventCallbacks(&callbacks, sizeof callbacks);
  if (error != JVMTI_ERROR_NONE) return error;
  for (jvmtiEvent event : kEvents) {
    error = session.jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
    if (error != JVMTI_ERROR_NONE) return error;
  }
  if (method_table) return session.jvmti->SetEventNotificationMode(JVMTI_ENABLE, kMethodTableEvent, nullptr);
  return JVMTI_ERROR_NONE;
}

jvmtiError DisableEvents(jvmtiEnv* jvmti) {
  jvmtiError first = JVMTI_ERROR_NONE;
  for (jvmtiEvent event : kEvents) {
    const jvmtiError error = jvmti->SetEventNotificationMode(JVMTI_DISABLE, event, nullptr);
    if (first == JVMTI_ERROR_NONE) first = error;
  }
  const jvmtiError error = jvmti->SetEventNotificationMode(JVMTI_DISABLE, kMethodTableEvent, nullptr);
  if (first == JVMTI_ERROR_NONE) first = error;
  return first;
}

void ReplayExistingCode(Session& state) {
  t_replaying = true;
  const jvmtiError stubs = state.jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
  const jvmtiError methods = state.jvmti->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD);
  t_replaying = false;
  if (stubs != JVMTI_ERROR_NONE || methods != JVMTI_ERROR_NONE) {
    Log(LogLevel::kWarn, "replaying existing code failed (JVMTI errors %d, %d); code compiled before the attach "
        "may be missing", stubs, methods);
  }
}

}  // namespace jitdump_agent
