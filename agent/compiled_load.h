// Turns one CompiledMethodLoad event into a finished batch: resolves names and lines of the
// methods in HotSpot's PcDesc scope chains through the method cache, builds the line rows and
// the optional inline tree, and encodes the records. The event is plain data (CollectScopes
// copies the scope chains out of compile_info), so the same code runs inside the callback or
// later on the writer thread (see deferred_load.h); tests drive it with a fake jvmtiEnv.
#pragma once

#include <jvmti.h>

#include <cstdint>
#include <span>
#include <vector>

#include "agent/method_cache.h"
#include "agent/options.h"
#include "agent/record_queue.h"
#include "agent/stats.h"

namespace jitdump_agent {

// One frame of a scope chain as HotSpot reports it.
struct ScopeFrame {
  jmethodID method = nullptr;
  int64_t bci = 0;
};

// One PcDesc: its pc and its chain, frames[first, first + count) of the event, innermost first.
struct ScopePc {
  uint64_t pc = 0;
  uint32_t first = 0;
  uint32_t count = 0;
};

struct CompiledLoadContext {
  MethodCache& cache;
  RecordQueue& queue;
  Stats& stats;
  const Options& options;
  bool lines;    // options.lines and the JVM granted the line capabilities
  uint32_t pid;
};

struct CompiledLoadEvent {
  uint64_t timestamp = 0;
  uint32_t tid = 0;
  jmethodID method = nullptr;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  const void* code = nullptr;  // the code bytes; nullptr: zeros (code=off)
  std::span<const ScopePc> pcs;
  std::span<const ScopeFrame> frames;
  bool replayed = false;
};

// Whether a load needs its scope chains at all (for line rows or the inline record).
inline bool WantsScopes(const CompiledLoadContext& c) { return c.lines || c.options.inline_info; }

// Appends the scope chains of compile_info's inline records (valid only inside the callback)
// to `pcs` and `frames`. PcDescs without frames are skipped.
void CollectScopes(const void* compile_info, std::vector<ScopePc>& pcs, std::vector<ScopeFrame>& frames);

// nullptr when the batch could not be allocated (counted in the stats). On the writer thread,
// `replaces` is the deferred batch the event was read from: the new batch takes over its budget.
Batch* BuildCompiledLoad(const CompiledLoadContext& context, const CompiledLoadEvent& event,
                         Batch* replaces = nullptr);

}  // namespace jitdump_agent
