// The queue between the callbacks and the writer: its node pool grows on demand and stops at
// its bound, and the byte budget is released as events are freed. (That resolving a deferred
// load takes no budget is WriterTest.ResolvingADeferredLoadTakesNoBudget.)
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

}  // namespace
}  // namespace jitdump_agent
