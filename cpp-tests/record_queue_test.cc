// The queue between the callbacks and the writer: its node pool grows on demand and stops at
// its bound, and the byte budget is released as events are freed. (That resolving a deferred
// load takes no budget is WriterTest.ResolvingADeferredLoadTakesNoBudget.)
#include "agent/core/record_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
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
    CodeEvent* event = queue.Allocate(0);
    ASSERT_NE(event, nullptr) << "the byte budget is far from full here";
    if (queue.Push(event)) ++pushed;
  }
  EXPECT_EQ(pushed, 65536);
  EXPECT_EQ(stats.lost_queue_full.Get(), static_cast<uint64_t>(kPushes - pushed));
  EXPECT_EQ(queue.records_in_flight(), 65536u);
  int popped = 0;
  while (CodeEvent* event = queue.Pop()) {
    queue.Free(event);
    ++popped;
  }
  EXPECT_EQ(popped, pushed);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
  // The grown pool is reused: pushing again needs no new nodes and still succeeds.
  CodeEvent* again = queue.Allocate(16);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(queue.Push(again));
  queue.Free(queue.Pop());
}

// overflow=wait: a record larger than the whole budget is dropped at once (its thread must not
// wait wait_ms for room that can never be there), while one that merely finds the budget full
// waits. The pressure handler runs when a producer starts waiting, so it tells the two apart.
TEST(RecordQueueTest, UnderOverflowWaitARecordLargerThanTheBudgetIsDroppedAtOnce) {
  Options options;
  options.budget_bytes = 64 << 10;
  options.overflow = Overflow::kWait;
  options.wait_ms = 20;
  Stats stats;
  RecordQueue queue(options, stats);
  int waits = 0;
  queue.SetPressureHandler([](void* count) { ++*static_cast<int*>(count); }, &waits);

  testing::internal::CaptureStderr();
  EXPECT_EQ(queue.Allocate(options.budget_bytes), nullptr);  // plus the event header: too big
  EXPECT_EQ(waits, 0) << "waited for a record that can never fit";
  EXPECT_EQ(stats.lost_budget.Get(), 1u);

  CodeEvent* most = queue.Allocate(options.budget_bytes - sizeof(CodeEvent));  // fills the budget
  ASSERT_NE(most, nullptr);
  EXPECT_EQ(queue.Allocate(1), nullptr);  // fits the budget, not what is left of it: waits, then drops
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(stats.lost_budget.Get(), 2u);
  queue.Free(most);
  const std::string log = testing::internal::GetCapturedStderr();

  // One warning each, saying what helps under overflow=wait (not "use overflow=wait").
  EXPECT_NE(log.find("larger than the whole record budget"), std::string::npos) << log;
  EXPECT_NE(log.find("raise budget= or wait_ms="), std::string::npos) << log;
  EXPECT_EQ(log.find("use overflow=wait"), std::string::npos) << log;
}

// The writer sleeps flush_ms between polls; producers wake it once 256 KiB are pending (a
// quarter of a smaller budget), once per drain: ArmWake, called as the writer starts to drain,
// allows the next wake-up.
TEST(RecordQueueTest, EnoughPendingWakesTheWriterOncePerDrain) {
  for (const uint64_t budget : {uint64_t{64} << 20, uint64_t{256} << 10}) {
    SCOPED_TRACE(budget);
    const uint64_t wake_at = std::min<uint64_t>(256 << 10, budget / 4);
    Options options;
    options.budget_bytes = budget;
    Stats stats;
    RecordQueue queue(options, stats);
    int wakes = 0;
    queue.SetPressureHandler([](void* count) { ++*static_cast<int*>(count); }, &wakes);
    auto push_until = [&](uint64_t bytes) {
      while (queue.bytes_in_flight() < bytes) {
        CodeEvent* event = queue.Allocate(1024);
        ASSERT_NE(event, nullptr);
        ASSERT_TRUE(queue.Push(event));
      }
    };
    push_until(wake_at - 2048);
    EXPECT_EQ(wakes, 0) << "woken before enough was pending";
    push_until(wake_at);
    EXPECT_EQ(wakes, 1);
    push_until(std::min<uint64_t>(budget / 2, 4 * wake_at));  // well below the record count that wakes it too
    EXPECT_EQ(wakes, 1) << "woken again before the writer drained";

    queue.ArmWake();  // the writer drains
    while (CodeEvent* event = queue.Pop()) queue.Free(event);
    push_until(wake_at - 2048);
    EXPECT_EQ(wakes, 1);
    push_until(wake_at);
    EXPECT_EQ(wakes, 2);
    while (CodeEvent* event = queue.Pop()) queue.Free(event);
  }
}

// The writer frees a written batch in one step; the budget comes back whole.
TEST(RecordQueueTest, FreeingABatchReturnsItsWholeBudget) {
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  std::vector<CodeEvent*> batch;
  for (size_t tail : {0u, 100u, 4000u}) batch.push_back(queue.Allocate(tail));
  batch.push_back(nullptr);  // tolerated, as Free tolerates it
  EXPECT_GT(queue.bytes_in_flight(), 4000u);
  queue.FreeAll(batch);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

// Event blocks come in power-of-two classes and are recycled: a freed block is the next one
// of its class handed out, within the pool's bound; larger events come from malloc.
TEST(RecordQueueTest, EventBlocksAreRecycledWithinTheirBound) {
  EXPECT_EQ(EventBlocks::BlockSize(1), 512u);
  EXPECT_EQ(EventBlocks::BlockSize(512), 512u);
  EXPECT_EQ(EventBlocks::BlockSize(513), 1024u);
  EXPECT_EQ(EventBlocks::BlockSize(65536), 65536u);
  EXPECT_EQ(EventBlocks::BlockSize(65537), 65537u);

  EventBlocks blocks;
  void* first = blocks.Take(3000);
  ASSERT_NE(first, nullptr);
  blocks.Give(first, 3000);
  EXPECT_EQ(blocks.pooled_bytes(), 4096u);
  EXPECT_EQ(blocks.Take(2100), first) << "a freed block is reused by its class";
  EXPECT_EQ(blocks.pooled_bytes(), 0u);
  blocks.Give(first, 2100);

  void* large = blocks.Take(100000);
  ASSERT_NE(large, nullptr);
  blocks.Give(large, 100000);
  EXPECT_EQ(blocks.pooled_bytes(), 4096u) << "blocks beyond the largest class go back to malloc";

  std::vector<void*> many;
  for (uint64_t taken = 0; taken < 2 * EventBlocks::kMaxPooledBytes; taken += 65536) many.push_back(blocks.Take(65536));
  for (void* block : many) blocks.Give(block, 65536);
  EXPECT_LE(blocks.pooled_bytes(), EventBlocks::kMaxPooledBytes);
}

}  // namespace
}  // namespace jitdump_agent
