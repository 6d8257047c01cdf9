// JVMTI event callbacks: thin glue into the plain C++ modules. Each callback copies what is
// valid only during the callback (code bytes, compile_info's scope chains) and queues it: as a
// deferred load for the writer to resolve (see deferred_load.h), or as finished records where
// the writer cannot resolve (before it attaches, from VM death on, resolve=callback). No file
// I/O, no waiting for the writer, and nothing thrown escapes into the JVM.
#include <jvmti.h>
#include <unistd.h>

#include <vector>

#include "agent/agent_state.h"
#include "agent/compiled_load.h"
#include "agent/deferred_load.h"
#include "agent/load_builder.h"
#include "agent/log.h"
#include "agent/names.h"

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

// Counts a callback in flight so VM death can wait for it, counts the event, and refuses it
// once the dump is closed (a refused code blob is counted as lost, so that for every kind
// events seen == records written + lost).
class CallbackScope {
 public:
  // `event_counter` selects the per-kind counter; `carries_code`: refusing the event loses a blob.
  CallbackScope(Counter Stats::*event_counter, bool carries_code) : state_(State()) {
    if (state_ == nullptr) return;
    state_->in_flight.fetch_add(1, std::memory_order_acq_rel);
    (state_->stats.*event_counter).Add();
    if (t_replaying) state_->stats.replayed_events.Add();
    if (state_->closed.load(std::memory_order_acquire)) {
      if (carries_code) state_->stats.lost_after_close.Add();
      Leave();
    }
  }
  ~CallbackScope() { Leave(); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
  // Null when the agent is not running or the event was refused.
  AgentState* state() const { return state_; }

 private:
  void Leave() {
    if (state_ != nullptr) state_->in_flight.fetch_sub(1, std::memory_order_acq_rel);
    state_ = nullptr;
  }
  AgentState* state_;
};

class DeferringScope {
 public:
  explicit DeferringScope(AgentState* s) : s_(s) { s_->deferring.fetch_add(1, std::memory_order_seq_cst); }
  ~DeferringScope() { s_->deferring.fetch_sub(1, std::memory_order_seq_cst); }
  DeferringScope(const DeferringScope&) = delete;
  DeferringScope& operator=(const DeferringScope&) = delete;

 private:
  AgentState* s_;
};

// Keeps the method's class loaded until the writer has looked the method up; the writer drops
// the reference. Without it a class unloaded in between answers INVALID_METHODID and its load
// gets no name (485 of 100k ScaleGen loads, whose classes die young). Pinning the root's class
// covers the methods its code inlined too: their loaders are recorded as dependencies of the
// root's loader when its constant pool resolves them, and hidden classes are reached from its
// constant pool cache. nullptr (and the load merely risks its name) when JNI refuses.
jobject PinDeclaringClass(AgentState* s, jmethodID method, JNIEnv** env) {
  jclass klass = nullptr;
  if (s->vm->GetEnv(reinterpret_cast<void**>(env), JNI_VERSION_1_6) != JNI_OK || *env == nullptr) return nullptr;
  if (s->jvmti->GetMethodDeclaringClass(method, &klass) != JVMTI_ERROR_NONE || klass == nullptr) return nullptr;
  const jobject pin = (*env)->NewGlobalRef(klass);
  (*env)->DeleteLocalRef(klass);
  return pin;
}

// Copies the load for the writer to resolve, with its class pinned until then.
void DeferLoad(AgentState* s, const CompiledLoadEvent& event) {
  JNIEnv* env = nullptr;
  const jobject pin = PinDeclaringClass(s, event.method, &env);
  Batch* batch = BuildDeferredLoad(s->queue, event, pin);
  const bool queued = batch != nullptr && s->queue.Push(batch);  // a failed push frees the batch
  if (queued) {
    s->stats.deferred_loads.Add();
  } else if (pin != nullptr) {
    env->DeleteGlobalRef(pin);  // nobody else will: the class must not stay loaded forever
  }
}

// The scope chains of compile_info, copied out per thread (the capacity follows the largest
// method this thread has seen).
thread_local std::vector<ScopePc> t_pcs;
thread_local std::vector<ScopeFrame> t_frames;

void HandleCompiledMethodLoad(AgentState* s, uint64_t timestamp, jmethodID method, jint code_size,
                              const void* code_addr, const void* compile_info) {
  const CompiledLoadContext context{*s->cache, s->queue, s->stats, s->options, s->lines, s->pid};
  t_pcs.clear();
  t_frames.clear();
  if (WantsScopes(context)) CollectScopes(compile_info, t_pcs, t_frames);
  CompiledLoadEvent event;
  event.timestamp = timestamp;
  event.tid = CurrentTid();
  event.method = method;
  event.code_addr = reinterpret_cast<uintptr_t>(code_addr);
  event.code_size = code_size > 0 ? static_cast<uint64_t>(code_size) : 0;
  event.code = s->options.code ? code_addr : nullptr;
  event.pcs = t_pcs;
  event.frames = t_frames;
  event.replayed = t_replaying;

  // StopDeferring either sees this callback counted in `deferring`, or this callback sees the
  // state stopped (both sequentially consistent).
  DeferringScope deferring(s);
  if (s->defer_state.load(std::memory_order_seq_cst) == AgentState::kDeferring) {
    DeferLoad(s, event);
    return;
  }
  if (Batch* batch = BuildCompiledLoad(context, event)) s->queue.Push(batch);
}

// Loads from now on are resolved in their callbacks; the deferred ones already queued are
// resolved by the writer now, while JVMTI still answers (after VMDeath it returns WRONG_PHASE).
void StopDeferring(AgentState* s) {
  if (s->resolver == nullptr) return;
  s->defer_state.store(AgentState::kStopped, std::memory_order_seq_cst);
  for (int i = 0; i < 1000 && s->deferring.load(std::memory_order_seq_cst) > 0; ++i) ::usleep(100);
  if (!s->writer.EndResolving(2000)) {
    Log(LogLevel::kWarn, "the writer did not resolve its queued loads within 2 s (slow disk?); some may be "
        "written without names");
  }
}

void JNICALL OnCompiledMethodLoad(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr,
                                  jint /*map_length*/, const jvmtiAddrLocationMap* /*map*/,
                                  const void* compile_info) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(&Stats::compiled_method_load, /*carries_code=*/true);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  // The thread CPU clock is a system call (about 1 µs here): sample one load in 16.
  const bool measure_cpu = !s->options.stats.empty() && (t_cpu_sample++ % kCpuSampleEvery) == 0;
  const uint64_t cpu_start = measure_cpu ? ThreadCpuNanos() : 0;
  try {
    HandleCompiledMethodLoad(s, timestamp, method, code_size, code_addr, compile_info);
  } catch (...) {
    s->stats.lost_allocation.Add();
  }
  if (measure_cpu) s->stats.load_cpu.Record(ThreadCpuNanos() - cpu_start);
  const uint64_t elapsed = MonotonicNanos() - timestamp;
  s->stats.load_latency.Record(elapsed);
  if (code_size >= 0 && static_cast<uint64_t>(code_size) <= Stats::kSmallCode) {
    s->stats.load_latency_small.Record(elapsed);
  }
}

void JNICALL OnDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(&Stats::dynamic_code_generated, /*carries_code=*/length > 0);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  if (length <= 0) {  // nothing a sample could land in
    s->stats.empty_blobs.Add();
    return;
  }
  try {
    const std::string stub_name = StubName(ModifiedUtf8ToUtf8(name != nullptr ? name : ""));
    LoadInput input;
    input.timestamp = timestamp;
    input.pid = s->pid;
    input.tid = CurrentTid();
    input.code_addr = reinterpret_cast<uintptr_t>(address);
    input.code_size = static_cast<uint64_t>(length);
    input.code = s->options.code ? address : nullptr;
    input.name = stub_name;
    input.replayed = t_replaying;
    input.dynamic_code = true;
    if (Batch* batch = BuildLoadBatch(s->queue, s->stats, input)) s->queue.Push(batch);
  } catch (...) {
    s->stats.lost_allocation.Add();
  }
  s->stats.dynamic_latency.Record(MonotonicNanos() - timestamp);
}

void JNICALL OnCompiledMethodUnload(jvmtiEnv*, jmethodID method, const void* code_addr) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(&Stats::compiled_method_unload, /*carries_code=*/false);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  try {
    // Never dereference code_addr or ask JVMTI about `method` here: both may be gone.
    {
      auto lock = s->cache->Lock();
      s->cache->Evict(method);
    }
    if (Batch* batch = BuildUnloadBatch(s->queue, timestamp, reinterpret_cast<uintptr_t>(code_addr))) {
      s->queue.Push(batch);
    }
  } catch (...) {
  }
  s->stats.unload_latency.Record(MonotonicNanos() - timestamp);
}

// The JVM can now run the Java code that attaching a thread needs.
void JNICALL OnVMInit(jvmtiEnv*, JNIEnv*, jthread) {
  try {
    AgentState* s = State();
    if (s != nullptr && s->resolver != nullptr) s->writer.BeginResolving();
  } catch (...) {
  }
}

void JNICALL OnVMDeath(jvmtiEnv*, JNIEnv*) {
  try {
    AgentState* s = State();
    if (s == nullptr) return;
    // HotSpot never posts some blobs live (InlineCacheBuffer, jni_fast_Get*Field, ...). A replay
    // now reports every non-nmethod blob; the writer keeps only those covering addresses nothing
    // else describes, so samples in them resolve too. The VM is still live during VMDeath.
    ReplayStubs(s);
    StopDeferring(s);
    // The files are closed in Agent_OnUnload, which HotSpot calls right after VMDeath on this
    // thread on every exit path that posts VMDeath. Closing here would refuse the loads the
    // ServiceThread still delivers while this callback runs (observed: dozens) and any event it
    // dequeued before the phase turned DEAD; by Agent_OnUnload events are disabled, so only
    // callbacks already in flight remain, and CloseOutput waits for those.
  } catch (...) {
  }
}

}  // namespace

jvmtiError EnableEvents(AgentState* state) {
  jvmtiEventCallbacks callbacks{};
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.CompiledMethodUnload = OnCompiledMethodUnload;
  callbacks.DynamicCodeGenerated = OnDynamicCodeGenerated;
  callbacks.VMInit = OnVMInit;
  callbacks.VMDeath = OnVMDeath;
  jvmtiError error = state->jvmti->SetEventCallbacks(&callbacks, sizeof callbacks);
  if (error != JVMTI_ERROR_NONE) return error;
  for (jvmtiEvent event : {JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                           JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH}) {
    error = state->jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
    if (error != JVMTI_ERROR_NONE) return error;
  }
  return JVMTI_ERROR_NONE;
}

void ReplayStubs(AgentState* state) {
  t_replaying = true;
  (void)state->jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
  t_replaying = false;
}

void ReplayExistingCode(AgentState* state) {
  t_replaying = true;
  const jvmtiError stubs = state->jvmti->GenerateEvents(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
  const jvmtiError methods = state->jvmti->GenerateEvents(JVMTI_EVENT_COMPILED_METHOD_LOAD);
  t_replaying = false;
  if (stubs != JVMTI_ERROR_NONE || methods != JVMTI_ERROR_NONE) {
    Log(LogLevel::kWarn, "replaying existing code failed (JVMTI errors %d, %d); code compiled before the attach "
        "may be missing", stubs, methods);
  }
}

}  // namespace jitdump_agent
