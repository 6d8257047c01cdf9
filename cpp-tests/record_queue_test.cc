// The queue between the callbacks and the writer: its node pool grows on demand and stops at
// its bound, and the byte budget is released as batches are freed.
#include "agent/record_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace jitdump_agent {
namespace {

TEST(RecordQueueTest, NodePoolGrowsOnDemandAndStopsAtItsBound) {
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  // Far more than the 1024 nodes made up front, and more than the bound of 65536.
  constexpr int kPushes = 70000;
  int pushed = 0;
  for (int i = 0; i < kPushes; ++i) {
    Batch* batch = queue.Allocate(0);
    ASSERT_NE(batch, nullptr) << "the byte budget is far from full here";
    if (queue.Push(batch)) ++pushed;
  }
  EXPECT_EQ(pushed, 65536);
  EXPECT_EQ(stats.lost_queue_full.Get(), static_cast<uint64_t>(kPushes - pushed));
  EXPECT_EQ(queue.records_in_flight(), 65536u);
  int popped = 0;
  while (Batch* batch = queue.Pop()) {
    queue.Free(batch);
    ++popped;
  }
  EXPECT_EQ(popped, pushed);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
  // The grown pool is reused: pushing again needs no new nodes and still succeeds.
  Batch* again = queue.Allocate(16);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(queue.Push(again));
  queue.Free(queue.Pop());
}

// The writer resolving a deferred load: the finished batch takes over the deferred one's bytes,
// so the two together never count twice and resolving never passes the budget.
TEST(RecordQueueTest, AReplacementInheritsTheBudgetOfWhatItReplaces) {
  Options options;
  options.budget_bytes = 64 << 10;
  options.overflow = Overflow::kWait;  // the writer must not wait even so
  Stats stats;
  RecordQueue queue(options, stats);
  Batch* deferred = queue.Allocate(40 << 10);
  ASSERT_NE(deferred, nullptr);
  const uint64_t full = queue.bytes_in_flight();

  Batch* smaller = queue.AllocateReplacing(*deferred, 30 << 10);
  ASSERT_NE(smaller, nullptr);
  EXPECT_EQ(queue.bytes_in_flight(), full) << "no new bytes: all inherited";
  queue.Free(deferred);
  EXPECT_EQ(queue.bytes_in_flight(), sizeof(Batch) + (30 << 10));
  queue.Free(smaller);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);

  deferred = queue.Allocate(20 << 10);
  Batch* other = queue.Allocate(30 << 10);  // what producers queued meanwhile
  ASSERT_NE(other, nullptr);
  Batch* larger = queue.AllocateReplacing(*deferred, 30 << 10);  // 10 KiB more: fits
  ASSERT_NE(larger, nullptr);
  EXPECT_LE(stats.queue_bytes_high.Get(), options.budget_bytes);
  Batch* too_large = queue.AllocateReplacing(*other, 60 << 10);  // 30 KiB more: does not
  EXPECT_EQ(too_large, nullptr);
  EXPECT_EQ(stats.lost_budget.Get(), 1u);
  EXPECT_LE(stats.queue_bytes_high.Get(), options.budget_bytes);
  for (Batch* batch : {deferred, other, larger}) queue.Free(batch);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

}  // namespace
}  // namespace jitdump_agent
