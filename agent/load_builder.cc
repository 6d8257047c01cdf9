#include "agent/load_builder.h"

#include <vector>

namespace jitdump_agent {

namespace {

// Reused per thread: a callback should not pay a heap allocation for a list it drops at once.
thread_local std::vector<jitdump::DebugEntry> t_entries;

}  // namespace

Batch* BuildLoadBatch(RecordQueue& queue, Stats& stats, const LoadInput& input) {
  std::vector<jitdump::DebugEntry>& entries = t_entries;
  entries.clear();
  for (const LineRow& row : input.rows) entries.push_back({row.addr, row.line, 0, *row.file});

  jitdump::CodeLoad load;
  load.timestamp = input.timestamp;
  load.pid = input.pid;
  load.tid = input.tid;
  load.vma = input.code_addr;
  load.code_addr = input.code_addr;
  load.code_size = input.code_size;
  load.code_index = 0;  // assigned by the writer, in file order
  load.name = input.name;
  load.code = input.code;

  const size_t debug_size = entries.empty() ? 0 : jitdump::DebugInfoSize(entries);
  const size_t inline_size = input.inline_info ? jitdump::InlineDebugInfoSize(*input.inline_info) : 0;
  const size_t load_size = jitdump::CodeLoadSize(load);
  if (load_size == 0 || (!entries.empty() && debug_size == 0) || (input.inline_info && inline_size == 0)) {
    stats.lost_allocation.Add();
    return nullptr;
  }
  const size_t payload_size = debug_size + inline_size + load_size;
  Batch* batch = input.replaces != nullptr ? queue.AllocateReplacing(*input.replaces, payload_size)
                                           : queue.Allocate(payload_size);
  if (batch == nullptr) return nullptr;
  batch->kind = BatchKind::kLoad;
  batch->replayed = input.replayed;
  batch->dynamic_code = input.dynamic_code;
  batch->timestamp = input.timestamp;
  batch->code_addr = input.code_addr;
  batch->code_size = input.code_size;

  uint8_t* const start = batch->payload();
  uint8_t* out = start;
  if (debug_size != 0) {
    batch->record_offsets[batch->record_count++] = 0;
    batch->has_debug_info = true;
    batch->debug_entries = static_cast<uint32_t>(entries.size());
    out = jitdump::EncodeDebugInfo(input.timestamp, input.code_addr, entries, out);
  }
  if (inline_size != 0) {
    batch->record_offsets[batch->record_count++] = static_cast<uint32_t>(out - start);
    batch->has_inline_info = true;
    out = jitdump::EncodeInlineDebugInfo(*input.inline_info, out);
  }
  batch->load_offset = static_cast<uint32_t>(out - start);
  batch->record_offsets[batch->record_count++] = batch->load_offset;
  jitdump::EncodeCodeLoad(load, out);
  return batch;
}

Batch* BuildUnloadBatch(RecordQueue& queue, uint64_t timestamp, uint64_t code_addr) {
  Batch* batch = queue.Allocate(0);
  if (batch == nullptr) return nullptr;
  batch->kind = BatchKind::kUnload;
  batch->timestamp = timestamp;
  batch->code_addr = code_addr;
  return batch;
}

}  // namespace jitdump_agent
