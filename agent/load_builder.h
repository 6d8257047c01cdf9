// Encodes the records for one code blob (its DEBUG_INFO, inline record and CODE_LOAD, in the
// order perf needs) into one queue batch. Plain C++: tests drive it without a JVM.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "agent/line_map.h"
#include "agent/record_queue.h"
#include "jitdump/encoder.h"

namespace jitdump_agent {

struct LoadInput {
  uint64_t timestamp = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  const void* code = nullptr;  // nullptr: zeros (code=off)
  std::string_view name;
  std::span<const LineRow> rows;                      // empty: no DEBUG_INFO
  const jitdump::InlineDebugInfo* inline_info = nullptr;  // null: no inline record
  bool replayed = false;
  bool dynamic_code = false;
  Batch* replaces = nullptr;  // the deferred load this resolves (see RecordQueue::AllocateReplacing)
};

// nullptr when the batch could not be allocated (already counted by the queue) or a record
// would exceed the format's 4 GiB limit (counted as an allocation loss).
Batch* BuildLoadBatch(RecordQueue& queue, Stats& stats, const LoadInput& input);

Batch* BuildUnloadBatch(RecordQueue& queue, uint64_t timestamp, uint64_t code_addr);

}  // namespace jitdump_agent
