// The budgeted queue of code events (record_queue.h).
#include "agent/core/record_queue.h"

#include <time.h>

#include <algorithm>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "agent/core/log.h"

namespace jitdump_agent {
namespace {

// Each pending event holds one queue node. Boost allocates nodes one by one, cache-line aligned
// (about 180 bytes of heap each), and recycles them without ever freeing them, so the pool
// stays at its high-water mark. Preallocating the whole bound cost 11.5 MiB of RSS in every
// JVM; instead a small pool grows on demand up to kMaxQueueNodes (javac peaks at a few
// thousand; class-unloading bursts of tiny unload records reach tens of thousands).
// Producers wake the writer early once a quarter of the bound is pending.
constexpr size_t kInitialQueueNodes = 1024;
constexpr uint64_t kMaxQueueNodes = RecordQueue::kMaxQueueNodes;
constexpr uint64_t kWakeWriterAt = kMaxQueueNodes / 4;
// The writer sleeps flush_ms between polls; a producer wakes it earlier once this much is
// pending (a quarter of smaller budgets). Every sleep and wake-up costs the writer tens of µs of
// CPU on a virtual machine (docs/measurements.md), so it should wake for a write of a few hundred KiB,
// not for every few loads; one wake-up per drain at most (ArmWake), so a JVM thread calls the
// handler about once per this many bytes of records.
constexpr uint64_t kWakeWriterBytes = 256 * 1024;

void SleepMillis(uint32_t ms) {
  struct timespec ts {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

RecordQueue::RecordQueue(const Options& options, Stats& stats)
    : budget_(options.budget_bytes),
      wake_bytes_(std::min<uint64_t>(kWakeWriterBytes, options.budget_bytes / 4)),
      overflow_(options.overflow),
      wait_ms_(options.wait_ms),
      stats_(stats),
      queue_(kInitialQueueNodes) {}

bool RecordQueue::Reserve(size_t bytes, bool may_wait) {
  // A record larger than the whole budget never fits, however long its thread waits.
  if (bytes > budget_) return false;
  uint64_t used = bytes_.load(std::memory_order_relaxed);
  for (uint32_t waited = 0;;) {
    while (used + bytes <= budget_) {
      if (bytes_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) {
        stats_.queue_bytes_high.Offer(used + bytes);
        return true;
      }
    }
    if (!may_wait || overflow_ != Overflow::kWait || waited >= wait_ms_) return false;
    if (waited == 0 && pressure_handler_ != nullptr) pressure_handler_(pressure_context_);
    SleepMillis(1);
    ++waited;
    used = bytes_.load(std::memory_order_relaxed);
  }
}

CodeEvent* RecordQueue::Allocate(size_t tail_size) {
  const size_t total = sizeof(CodeEvent) + tail_size;
  // The budget holds what the event's block takes (its size class's size).
  const size_t block = total < tail_size ? SIZE_MAX : EventBlocks::BlockSize(total);
  if (total < tail_size || !Reserve(block, /*may_wait=*/true)) {
    CountBudgetLoss(block);
    return nullptr;
  }
  void* memory = blocks_.Take(total);
  if (memory == nullptr) {
    bytes_.fetch_sub(block, std::memory_order_relaxed);
    stats_.lost_allocation.Add();
    return nullptr;
  }
  CodeEvent* event = new (memory) CodeEvent();
  event->accounted = block;
  return event;
}

void RecordQueue::CountBudgetLoss(size_t bytes) {
  stats_.lost_budget.Add();
  if (bytes > budget_) {
    if (oversized_warning_.First()) {
      Log(LogLevel::kWarn,
          "a record of %zu bytes is larger than the whole record budget of %llu bytes; dropping such records at "
          "once and counting them (raise budget=)",
          bytes, static_cast<unsigned long long>(budget_));
    }
  } else if (budget_warning_.First()) {
    if (overflow_ == Overflow::kWait) {
      Log(LogLevel::kWarn,
          "record budget of %llu bytes stayed full for wait_ms=%u; dropping records and counting them (raise "
          "budget= or wait_ms=)",
          static_cast<unsigned long long>(budget_), wait_ms_);
    } else {
      Log(LogLevel::kWarn,
          "record budget of %llu bytes is full; dropping records and counting them (raise budget= or use "
          "overflow=wait)",
          static_cast<unsigned long long>(budget_));
    }
  }
}

bool RecordQueue::TryPush(CodeEvent* event) {
  // Below the bound a push may add a node to the pool (the count is read before the push, so
  // concurrent producers can overshoot it by at most one node each).
  if (records_.load(std::memory_order_relaxed) >= kMaxQueueNodes) return queue_.bounded_push(event);
  try {
    return queue_.push(event);
  } catch (...) {  // no memory for a node: treated as a full queue
    return false;
  }
}

bool RecordQueue::Push(CodeEvent* event) {
  bool pushed = TryPush(event);
  for (uint32_t waited = 0; !pushed && overflow_ == Overflow::kWait && waited < wait_ms_; ++waited) {
    if (waited == 0 && pressure_handler_ != nullptr) pressure_handler_(pressure_context_);
    SleepMillis(1);
    pushed = TryPush(event);
  }
  if (!pushed) {
    stats_.lost_queue_full.Add();
    if (queue_warning_.First()) Log(LogLevel::kWarn, "record queue is full; dropping records and counting them");
    Free(event);
    return false;
  }
  const uint64_t pending = records_.fetch_add(1, std::memory_order_relaxed) + 1;
  stats_.queue_records_high.Offer(pending);
  WakeWriterIfDue(pending);
  return true;
}

void RecordQueue::WakeWriterIfDue(uint64_t pending_records) {
  if (pressure_handler_ == nullptr) return;
  if (pending_records == kWakeWriterAt) {
    pressure_handler_(pressure_context_);
    return;
  }
  // Most pushes stop at the first load: nothing is armed while the writer is already due.
  if (!wake_armed_.load(std::memory_order_relaxed) || bytes_.load(std::memory_order_relaxed) < wake_bytes_) return;
  if (wake_armed_.exchange(false, std::memory_order_relaxed)) pressure_handler_(pressure_context_);
}

CodeEvent* RecordQueue::Pop() {
  CodeEvent* event = nullptr;
  if (!queue_.pop(event)) return nullptr;
  records_.fetch_sub(1, std::memory_order_relaxed);
  return event;
}

void RecordQueue::Free(CodeEvent* event) {
  if (event == nullptr) return;
  const size_t block = event->accounted;
  bytes_.fetch_sub(block, std::memory_order_relaxed);
  event->~CodeEvent();
  blocks_.Give(event, block);
}

void RecordQueue::FreeAll(std::span<CodeEvent* const> events) {
  uint64_t accounted = 0;
  for (CodeEvent* event : events) {
    if (event == nullptr) continue;
    const size_t block = event->accounted;
    accounted += block;
    event->~CodeEvent();
    blocks_.Give(event, block);
  }
  if (accounted != 0) bytes_.fetch_sub(accounted, std::memory_order_relaxed);
  stats_.event_pool_high.Offer(blocks_.pooled_bytes());
}

}  // namespace jitdump_agent
