// Finished records on their way from JVM threads to the writer thread.
//
// A Batch is one malloc'ed block holding whole encoded records (DEBUG_INFO, the inline record
// and the CODE_LOAD they describe, in file order) or an unload notice. Producers reserve its
// bytes against a budget, fill it, and push one pointer through a Boost.Lockfree queue whose
// nodes are all allocated up front: pushing never allocates, locks or waits. The writer pops,
// writes and frees. What does not fit is counted, never silently dropped.
#pragma once

#include <boost/lockfree/queue.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/options.h"
#include "agent/stats.h"

namespace jitdump_agent {

enum class BatchKind : uint8_t {
  kLoad,          // finished records
  kUnload,        // an unload notice
  kDeferredLoad,  // a CompiledMethodLoad still to be resolved by the writer (deferred_load.h)
};

struct Batch {
  BatchKind kind = BatchKind::kLoad;
  bool replayed = false;        // came from GenerateEvents
  bool dynamic_code = false;    // a DynamicCodeGenerated blob (stub, adapter, interpreter)
  uint8_t record_count = 0;     // records in the payload (kLoad)
  bool has_debug_info = false;
  bool has_inline_info = false;
  uint32_t record_offsets[4] = {};  // where each record starts in the payload
  uint32_t load_offset = 0;     // offset of the CODE_LOAD record
  uint32_t debug_entries = 0;
  uint64_t timestamp = 0;       // taken in the callback
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  size_t payload_size = 0;
  size_t accounted = 0;         // bytes reserved against the budget

  uint8_t* payload() { return reinterpret_cast<uint8_t*>(this + 1); }
  const uint8_t* payload() const { return reinterpret_cast<const uint8_t*>(this + 1); }
  // The function name inside the CODE_LOAD record.
  const char* load_name() const;
};

class RecordQueue {
 public:
  RecordQueue(const Options& options, Stats& stats);
  RecordQueue(const RecordQueue&) = delete;
  RecordQueue& operator=(const RecordQueue&) = delete;

  // A batch with room for `payload_size` bytes, or nullptr (counted as lost) when the budget
  // or memory is exhausted. With overflow=wait the caller may wait up to wait_ms for room.
  Batch* Allocate(size_t payload_size);
  // For the writer thread, turning the deferred load `old` into a finished batch: the new batch
  // takes over old's reserved bytes and reserves only what it needs beyond them, without
  // waiting (only the writer frees room). So resolving never takes the bytes in flight past
  // the budget. nullptr (counted) when the extra bytes do not fit or malloc fails.
  Batch* AllocateReplacing(Batch& old, size_t payload_size);
  // Hands the batch to the writer; on failure frees it and counts it as lost.
  bool Push(Batch* batch);
  // Writer side.
  Batch* Pop();
  void Free(Batch* batch);

  bool lock_free() const { return queue_.is_lock_free(); }
  // Called (from the producing JVM thread) when the queue fills up or overflow=wait makes a
  // producer wait for room, so the writer drains now instead of at its next poll.
  void SetPressureHandler(void (*handler)(void*), void* context) {
    pressure_handler_ = handler;
    pressure_context_ = context;
  }
  uint64_t bytes_in_flight() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t records_in_flight() const { return records_.load(std::memory_order_relaxed); }

 private:
  // With overflow=wait and `may_wait`, waits up to wait_ms for room.
  bool Reserve(size_t bytes, bool may_wait);
  void CountBudgetLoss();
  // Allocates a batch whose `reserved` bytes (of its size) were just reserved; on failure
  // returns them and counts the loss.
  Batch* NewBatch(size_t payload_size, size_t reserved);
  bool TryPush(Batch* batch);

  const uint64_t budget_;
  const Overflow overflow_;
  const uint32_t wait_ms_;
  Stats& stats_;
  void (*pressure_handler_)(void*) = nullptr;
  void* pressure_context_ = nullptr;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> records_{0};
  boost::lockfree::queue<Batch*, boost::lockfree::fixed_sized<false>> queue_;
};

}  // namespace jitdump_agent
