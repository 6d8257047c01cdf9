// JVMTI event callbacks: thin glue from HotSpot's structures to the plain C++ modules. Each
// callback copies what it needs (code bytes, compile_info) before returning, resolves names
// and lines through the method cache, builds finished records and queues them. No file I/O,
// no waiting for the writer, and nothing thrown escapes into the JVM.
#include <jvmti.h>
#include <jvmticmlr.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "agent/agent_state.h"
#include "agent/inline_tree.h"
#include "agent/load_builder.h"
#include "agent/log.h"
#include "agent/names.h"

namespace jitdump_agent {
namespace {

thread_local bool t_replaying = false;

// Counts a callback in flight so VM death can wait for it; refuses once the dump is closed.
class CallbackScope {
 public:
  // `carries_code`: the event describes a code blob, so refusing it loses that blob.
  explicit CallbackScope(bool carries_code) : state_(State()) {
    if (state_ == nullptr) return;
    state_->in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (state_->closed.load(std::memory_order_acquire)) {
      if (carries_code) state_->stats.lost_after_close.Add();
      Leave();
    }
  }
  ~CallbackScope() { Leave(); }
  AgentState* state() const { return state_; }

 private:
  void Leave() {
    if (state_ != nullptr) state_->in_flight.fetch_sub(1, std::memory_order_acq_rel);
    state_ = nullptr;
  }
  AgentState* state_;
};

struct PcFrames {
  uint64_t pc;
  size_t first;  // index into the flat frame list
  size_t count;
};

// Per-thread working memory for load callbacks, reused so a callback allocates only its batch
// (its capacity follows the largest method this thread has seen).
struct LoadScratch {
  std::vector<Frame> frames;
  std::vector<PcFrames> pcs;
  std::vector<PcSite> sites;
  void Clear() {
    frames.clear();
    pcs.clear();
    sites.clear();
  }
};
thread_local LoadScratch t_scratch;

void HandleCompiledMethodLoad(AgentState* s, uint64_t timestamp, jmethodID method, jint code_size,
                              const void* code_addr, const void* compile_info) {
  const uint64_t start = reinterpret_cast<uintptr_t>(code_addr);
  const uint64_t size = code_size > 0 ? static_cast<uint64_t>(code_size) : 0;

  auto lock = s->cache->Lock();
  s->cache->BeginCallback();
  const MethodInfo* root = s->cache->Get(method);

  // Scope chains of every PcDesc, innermost first, from HotSpot's inline record.
  LoadScratch& scratch = t_scratch;
  scratch.Clear();
  std::vector<Frame>& frames = scratch.frames;
  std::vector<PcFrames>& pcs = scratch.pcs;
  const bool want_scopes = s->lines || s->options.inline_info;
  for (auto* header = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(compile_info);
       want_scopes && header != nullptr; header = header->next) {
    if (header->kind != JVMTI_CMLR_INLINE_INFO) continue;
    const auto* record = reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(header);
    if (record->pcinfo == nullptr) continue;
    pcs.reserve(pcs.size() + static_cast<size_t>(record->numpcs));
    for (jint i = 0; i < record->numpcs; ++i) {
      const PCStackInfo& info = record->pcinfo[i];
      if (info.methods == nullptr || info.bcis == nullptr || info.numstackframes <= 0) continue;
      const size_t first = frames.size();
      for (jint j = 0; j < info.numstackframes; ++j) {
        const MethodInfo* m = s->cache->Get(info.methods[j]);
        frames.push_back({&m->source, info.bcis[j]});
      }
      pcs.push_back({reinterpret_cast<uintptr_t>(info.pc), first, static_cast<size_t>(info.numstackframes)});
    }
  }
  std::vector<PcSite>& sites = scratch.sites;
  for (const PcFrames& p : pcs) sites.push_back({p.pc, std::span<const Frame>(frames.data() + p.first, p.count)});

  std::vector<LineRow> rows;
  if (s->lines) rows = BuildLineRows(start, start + size, sites);

  InlineTreeBuilder inline_builder;
  const jitdump::InlineDebugInfo* inline_info = nullptr;
  if (s->options.inline_info && !sites.empty()) {
    inline_info = inline_builder.Build(timestamp, start, size, root->source, sites);
  }

  LoadInput input;
  input.timestamp = timestamp;
  input.pid = s->pid;
  input.tid = static_cast<uint32_t>(::gettid());
  input.code_addr = start;
  input.code_size = size;
  input.code = s->options.code ? code_addr : nullptr;
  input.name = root->name;
  input.rows = rows;
  input.inline_info = inline_info;
  input.replayed = t_replaying;
  Batch* batch = BuildLoadBatch(s->queue, s->stats, input);
  lock.unlock();
  if (batch != nullptr) s->queue.Push(batch);
}

void JNICALL OnCompiledMethodLoad(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr,
                                  jint /*map_length*/, const jvmtiAddrLocationMap* /*map*/,
                                  const void* compile_info) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(/*carries_code=*/true);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  s->stats.compiled_method_load.Add();
  if (t_replaying) s->stats.replayed_events.Add();
  try {
    HandleCompiledMethodLoad(s, timestamp, method, code_size, code_addr, compile_info);
  } catch (...) {
    s->stats.lost_allocation.Add();
  }
  s->stats.load_latency.Record(MonotonicNanos() - timestamp);
}

void JNICALL OnDynamicCodeGenerated(jvmtiEnv*, const char* name, const void* address, jint length) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(/*carries_code=*/true);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  s->stats.dynamic_code_generated.Add();
  if (t_replaying) s->stats.replayed_events.Add();
  if (length <= 0) return;  // nothing a sample could land in
  try {
    const std::string stub_name = StubName(name != nullptr ? name : "");
    LoadInput input;
    input.timestamp = timestamp;
    input.pid = s->pid;
    input.tid = static_cast<uint32_t>(::gettid());
    input.code_addr = reinterpret_cast<uintptr_t>(address);
    input.code_size = static_cast<uint64_t>(length);
    input.code = s->options.code ? address : nullptr;
    input.name = stub_name;
    input.replayed = t_replaying;
    if (Batch* batch = BuildLoadBatch(s->queue, s->stats, input)) s->queue.Push(batch);
  } catch (...) {
    s->stats.lost_allocation.Add();
  }
  s->stats.dynamic_latency.Record(MonotonicNanos() - timestamp);
}

void JNICALL OnCompiledMethodUnload(jvmtiEnv*, jmethodID method, const void* code_addr) {
  const uint64_t timestamp = MonotonicNanos();
  CallbackScope scope(/*carries_code=*/false);
  AgentState* s = scope.state();
  if (s == nullptr) return;
  s->stats.compiled_method_unload.Add();
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

void JNICALL OnVMDeath(jvmtiEnv*, JNIEnv*);

}  // namespace

uint64_t MonotonicNanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CloseOutput(AgentState* s);

namespace {

void JNICALL OnVMDeath(jvmtiEnv*, JNIEnv*) {
  try {
    if (AgentState* s = State()) CloseOutput(s);
  } catch (...) {
  }
}

}  // namespace

jvmtiError EnableEvents(AgentState* state) {
  jvmtiEventCallbacks callbacks{};
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.CompiledMethodUnload = OnCompiledMethodUnload;
  callbacks.DynamicCodeGenerated = OnDynamicCodeGenerated;
  callbacks.VMDeath = OnVMDeath;
  jvmtiError error = state->jvmti->SetEventCallbacks(&callbacks, sizeof callbacks);
  if (error != JVMTI_ERROR_NONE) return error;
  for (jvmtiEvent event : {JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                           JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_VM_DEATH}) {
    error = state->jvmti->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
    if (error != JVMTI_ERROR_NONE) return error;
  }
  return JVMTI_ERROR_NONE;
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
