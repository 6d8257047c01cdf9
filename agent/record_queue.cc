#include "agent/record_queue.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "agent/log.h"
#include "jitdump/format.h"

namespace jitdump_agent {
namespace {

// Each pending batch holds one queue node. Boost allocates nodes one by one, cache-line aligned
// (about 180 bytes of heap each), and recycles them without ever freeing them, so the pool
// stays at its high-water mark. Preallocating the whole bound cost 11.5 MiB of RSS in every
// JVM; instead a small pool grows on demand up to kMaxQueueNodes (javac peaks at a few
// thousand; class-unloading bursts of tiny unload records reach tens of thousands).
// Producers wake the writer early once a quarter of the bound is pending.
constexpr size_t kInitialQueueNodes = 1024;
constexpr uint64_t kMaxQueueNodes = 65536;
constexpr uint64_t kWakeWriterAt = kMaxQueueNodes / 4;

WarnOnce g_budget_warning;
WarnOnce g_queue_warning;

void SleepMillis(uint32_t ms) {
  struct timespec ts {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

const char* Batch::load_name() const {
  return reinterpret_cast<const char*>(payload() + load_offset + sizeof(jitdump::CodeLoadFixed));
}

RecordQueue::RecordQueue(const Options& options, Stats& stats)
    : budget_(options.budget_bytes),
      overflow_(options.overflow),
      wait_ms_(options.wait_ms),
      stats_(stats),
      queue_(kInitialQueueNodes) {}

bool RecordQueue::Reserve(size_t bytes, bool may_wait) {
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

Batch* RecordQueue::Allocate(size_t payload_size) {
  if (!Reserve(sizeof(Batch) + payload_size, /*may_wait=*/true)) {
    CountBudgetLoss();
    return nullptr;
  }
  return NewBatch(payload_size, sizeof(Batch) + payload_size);
}

Batch* RecordQueue::AllocateReplacing(Batch& old, size_t payload_size) {
  const size_t total = sizeof(Batch) + payload_size;
  const size_t inherited = std::min(total, old.accounted);
  if (total > inherited && !Reserve(total - inherited, /*may_wait=*/false)) {
    CountBudgetLoss();
    return nullptr;
  }
  Batch* batch = NewBatch(payload_size, total - inherited);
  if (batch != nullptr) old.accounted -= inherited;
  return batch;
}

void RecordQueue::CountBudgetLoss() {
  stats_.lost_budget.Add();
  if (g_budget_warning.First()) {
    Log(LogLevel::kWarn,
        "record budget of %llu bytes is full; dropping records and counting them (raise budget= or use "
        "overflow=wait)",
        static_cast<unsigned long long>(budget_));
  }
}

Batch* RecordQueue::NewBatch(size_t payload_size, size_t reserved) {
  const size_t total = sizeof(Batch) + payload_size;
  void* memory = std::malloc(total);
  if (memory == nullptr) {
    bytes_.fetch_sub(reserved, std::memory_order_relaxed);
    stats_.lost_allocation.Add();
    return nullptr;
  }
  Batch* batch = new (memory) Batch();
  batch->payload_size = payload_size;
  batch->accounted = total;
  return batch;
}

bool RecordQueue::TryPush(Batch* batch) {
  // Below the bound a push may add a node to the pool (the count is read before the push, so
  // concurrent producers can overshoot it by at most one node each).
  if (records_.load(std::memory_order_relaxed) >= kMaxQueueNodes) return queue_.bounded_push(batch);
  try {
    return queue_.push(batch);
  } catch (...) {  // no memory for a node: treated as a full queue
    return false;
  }
}

bool RecordQueue::Push(Batch* batch) {
  bool pushed = TryPush(batch);
  for (uint32_t waited = 0; !pushed && overflow_ == Overflow::kWait && waited < wait_ms_; ++waited) {
    if (waited == 0 && pressure_handler_ != nullptr) pressure_handler_(pressure_context_);
    SleepMillis(1);
    pushed = TryPush(batch);
  }
  if (!pushed) {
    stats_.lost_queue_full.Add();
    if (g_queue_warning.First()) Log(LogLevel::kWarn, "record queue is full; dropping records and counting them");
    Free(batch);
    return false;
  }
  const uint64_t pending = records_.fetch_add(1, std::memory_order_relaxed) + 1;
  stats_.queue_records_high.Offer(pending);
  if (pending == kWakeWriterAt && pressure_handler_ != nullptr) pressure_handler_(pressure_context_);
  return true;
}

Batch* RecordQueue::Pop() {
  Batch* batch = nullptr;
  if (!queue_.pop(batch)) return nullptr;
  records_.fetch_sub(1, std::memory_order_relaxed);
  return batch;
}

void RecordQueue::Free(Batch* batch) {
  if (batch == nullptr) return;
  bytes_.fetch_sub(batch->accounted, std::memory_order_relaxed);
  batch->~Batch();
  std::free(batch);
}

}  // namespace jitdump_agent
