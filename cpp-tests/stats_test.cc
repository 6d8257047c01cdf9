#include "agent/core/stats.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace jitdump_agent {
namespace {

TEST(LatencyHistogramTest, BucketsAreMonotonicAndTight) {
  int last = -1;
  for (uint64_t v = 0; v < 200000; v += 7) {
    const int b = LatencyHistogram::BucketOf(v);
    EXPECT_GE(b, last);
    last = b;
    EXPECT_GE(LatencyHistogram::BucketUpperBound(b), v);
    EXPECT_LE(LatencyHistogram::BucketUpperBound(b), v + v / 8 + 1);
  }
}

TEST(LatencyHistogramTest, PercentilesWithinOneBucket) {
  LatencyHistogram h;
  for (uint64_t i = 1; i <= 1000; ++i) h.Record(i * 1000);  // 1 us .. 1 ms
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1000000u);
  const uint64_t p50 = h.Percentile(0.5);
  EXPECT_GE(p50, 500000u);
  EXPECT_LE(p50, 500000u * 9 / 8);
  const uint64_t p99 = h.Percentile(0.99);
  EXPECT_GE(p99, 990000u);
  EXPECT_LE(p99, 1000000u);  // never above the true max
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(0.99), 0u);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAreAllCounted) {
  LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h] {
      for (int i = 0; i < 10000; ++i) h.Record(static_cast<uint64_t>(i));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(h.count(), 40000u);
  EXPECT_EQ(h.max(), 9999u);
}

TEST(StatsTest, JsonCarriesEveryCounter) {
  Stats s;
  s.compiled_method_load.Add(3);
  s.lost_budget.Add(2);
  s.lost_write_error.Add(1);
  s.queue_bytes_high.Offer(100);
  s.queue_bytes_high.Offer(50);
  s.load_latency.Record(4000);
  const std::string json = s.ToJson("/tmp/jit-1.dump", "");
  EXPECT_NE(json.find("\"compiled_method_load\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bytes_high_water\":100"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dump\":\"/tmp/jit-1.dump\""), std::string::npos) << json;
  EXPECT_EQ(s.LostTotal(), 3u);
}

TEST(StatsTest, EveryLostCauseCountsInTheTotal) {
  Stats s;
  Counter* causes[] = {&s.lost_budget,      &s.lost_queue_full,  &s.lost_allocation, &s.lost_write_error,
                       &s.lost_after_close, &s.lost_no_output,   &s.lost_unresolved, &s.lost_writer_error, &s.lost_writer_stalled};
  uint64_t n = 0;
  for (Counter* cause : causes) cause->Add(++n);
  EXPECT_EQ(s.LostTotal(), n * (n + 1) / 2);
  const std::string json = s.ToJson("", "");
  EXPECT_NE(json.find("\"writer_error\":8"), std::string::npos) << json;
  EXPECT_NE(json.find("\"writer_stalled\":9"), std::string::npos) << json;
}

TEST(StatsTest, UnaccountedIsWhatNoCounterExplains) {
  Stats s;
  s.compiled_method_load.Add(10);
  s.dynamic_code_generated.Add(5);
  s.empty_blobs.Add(1);  // 14 code blobs offered
  s.code_loads_written.Add(6);
  s.duplicate_loads.Add(2);
  s.lost_budget.Add(1);
  EXPECT_EQ(s.Unaccounted(), 5u);
  s.lost_writer_stalled.Add(s.Unaccounted());
  EXPECT_EQ(s.Unaccounted(), 0u);
  s.code_loads_written.Add(3);  // a stalled writer that wrote on after all: never below 0
  EXPECT_EQ(s.Unaccounted(), 0u);
}

TEST(StatsTest, JsonEscapesPaths) {
  Stats s;
  const std::string json = s.ToJson("/tmp/a\"b\\c\n", "");
  EXPECT_NE(json.find("a\\\"b\\\\c\\u000a"), std::string::npos) << json;
}

}  // namespace
}  // namespace jitdump_agent
