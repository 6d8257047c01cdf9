// Code events on their way from JVM threads to the writer thread, within a byte budget.
//
// Each event (code_event.h) is one block (recycled: event_blocks.h) whose bytes a producer
// reserves against the budget (budget=) before filling it; it then pushes one pointer through a
// Boost.Lockfree queue. The queue's node pool starts small and grows on demand up to a bound, so
// a push allocates at most a node and never locks or waits (overflow=wait aside). The writer
// pops, writes and frees. What does not fit is counted as lost by cause, never silently dropped.
#pragma once

#include <boost/lockfree/queue.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "agent/core/code_event.h"
#include "agent/core/event_blocks.h"
#include "agent/core/log.h"
#include "agent/core/options.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

class RecordQueue {
 public:
  // Each pending event holds one queue node; the pool grows on demand up to this many
  // (record_queue.cc says why).
  static constexpr uint64_t kMaxQueueNodes = 65536;

  RecordQueue(const Options& options, Stats& stats);
  RecordQueue(const RecordQueue&) = delete;
  RecordQueue& operator=(const RecordQueue&) = delete;

  // A default-constructed event followed by `tail_size` bytes of storage, or nullptr (counted
  // as lost) when the budget or memory is exhausted. With overflow=wait the caller may wait up
  // to wait_ms for room, unless the event is larger than the whole budget (dropped at once).
  CodeEvent* Allocate(size_t tail_size);
  // Hands the event to the writer; on failure frees it and counts it as lost.
  bool Push(CodeEvent* event);
  // Writer side.
  CodeEvent* Pop();
  void Free(CodeEvent* event);
  // Frees written events and returns their budget in one step: producers reserve against the
  // same counter, so one update per write instead of one per event keeps its cache line with
  // them.
  void FreeAll(std::span<CodeEvent* const> events);

  bool lock_free() const { return queue_.is_lock_free(); }
  // Writer side, once the session is over: frees the recycled event blocks.
  void ReleasePool() { blocks_.Release(); }
  // Called (from the producing JVM thread) when enough is pending to be worth a write (see
  // kWakeWriterBytes in record_queue.cc), when the queue fills up or when overflow=wait makes a
  // producer wait for room, so the writer drains now instead of at its next poll. The handler
  // must neither block nor allocate.
  void SetPressureHandler(void (*handler)(void*), void* context) {
    pressure_handler_ = handler;
    pressure_context_ = context;
  }
  // Writer side, before it drains: the next time enough is pending, wake it again. Until then
  // producers do not call the handler for the amount pending (one wake-up per drain at most).
  void ArmWake() { wake_armed_.store(true, std::memory_order_relaxed); }
  uint64_t bytes_in_flight() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t records_in_flight() const { return records_.load(std::memory_order_relaxed); }

 private:
  // With overflow=wait and `may_wait`, waits up to wait_ms for room; never for a record larger
  // than the whole budget.
  bool Reserve(size_t bytes, bool may_wait);
  // A record of `bytes` did not fit: counted as lost.budget, with one warning per kind (full
  // budget, record larger than the budget) that suggests what helps under the policy in force.
  void CountBudgetLoss(size_t bytes);
  bool TryPush(CodeEvent* event);
  // The amount pending after a push: wakes the writer once it is worth a write.
  void WakeWriterIfDue(uint64_t pending_records);

  const uint64_t budget_;
  const uint64_t wake_bytes_;  // pending bytes that wake the writer
  const Overflow overflow_;
  const uint32_t wait_ms_;
  Stats& stats_;
  void (*pressure_handler_)(void*) = nullptr;
  void* pressure_context_ = nullptr;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> records_{0};
  std::atomic<bool> wake_armed_{true};
  // One warning per session for each way records are dropped.
  WarnOnce budget_warning_;
  WarnOnce oversized_warning_;
  WarnOnce queue_warning_;
  EventBlocks blocks_;
  boost::lockfree::queue<CodeEvent*, boost::lockfree::fixed_sized<false>> queue_;
};

}  // namespace jitdump_agent
