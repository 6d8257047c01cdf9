// Turns one CompiledMethodLoad event into a finished batch: walks HotSpot's compile_info
// (PcDesc scope chains), resolves names and lines through the method cache, builds the line
// rows and the optional inline tree, and encodes the records. Called inside the callback, where
// compile_info and the code bytes are valid; tests drive it with a fake jvmtiEnv.
#pragma once

#include <jvmti.h>

#include <cstdint>

#include "agent/method_cache.h"
#include "agent/options.h"
#include "agent/record_queue.h"
#include "agent/stats.h"

namespace jitdump_agent {

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
  jint code_size = 0;
  const void* code_addr = nullptr;
  const void* compile_info = nullptr;
  bool replayed = false;
};

// nullptr when the batch could not be allocated (counted in the stats).
Batch* BuildCompiledLoad(const CompiledLoadContext& context, const CompiledLoadEvent& event);

}  // namespace jitdump_agent
