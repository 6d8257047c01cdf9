// perf's ordering rule, alone: at a round's end only what is at or before the previous round's
// newest time goes out; ties keep their arrival order; late records go out at once; the budget
// forces the oldest half out.
#include "jitdump/perfdata/round_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace jitdump::perfdata {
namespace {

struct Out {
  std::vector<uint64_t> times;
  std::vector<uint64_t> offsets;
  void operator()(const QueuedRecord& q) {
    times.push_back(q.time);
    offsets.push_back(q.offset);
    EXPECT_EQ(q.bytes.size(), 16u);
    EXPECT_EQ(q.bytes[0], static_cast<uint8_t>(q.offset));  // the bytes travel with their record
  }
};

void Add(RoundSorter& s, uint64_t time, uint64_t offset, Out& out) {
  std::vector<uint8_t> bytes(16, static_cast<uint8_t>(offset));
  s.Add(time, offset, 0, bytes, out);
}

TEST(RoundSorter, ReleasesOnlyWhatTheNextRoundCannotPrecede) {
  RoundSorter s(1 << 20);
  Out out;
  Add(s, 30, 1, out);
  Add(s, 10, 2, out);
  s.FinishRound(out);  // round 1: nothing can go yet (round 2 may hold times down to 10)
  EXPECT_TRUE(out.times.empty());
  Add(s, 20, 3, out);
  Add(s, 40, 4, out);
  s.FinishRound(out);  // everything <= 30 (round 1's newest) goes
  EXPECT_EQ(out.times, (std::vector<uint64_t>{10, 20, 30}));
  Add(s, 35, 5, out);
  s.Finish(out);
  EXPECT_EQ(out.times, (std::vector<uint64_t>{10, 20, 30, 35, 40}));
  EXPECT_EQ(s.late(), 0u);
}

TEST(RoundSorter, TiesKeepArrivalOrder) {
  RoundSorter s(1 << 20);
  Out out;
  for (uint64_t i = 0; i < 50; ++i) Add(s, 7, i, out);
  s.Finish(out);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(out.offsets[i], i);
}

// A round as perf record writes it: each CPU's records in time order, one CPU's buffer after
// another (here five, odd in number, with ties across them and some left for the next round).
TEST(RoundSorter, MergesEachCpusRunsInTimeOrderTiesByArrival) {
  RoundSorter s(1 << 20);
  Out out;
  std::vector<std::pair<uint64_t, uint64_t>> added;  // (time, offset)
  uint64_t offset = 0;
  for (uint64_t cpu = 0; cpu < 5; ++cpu) {
    for (uint64_t t = cpu; t < 200; t += 3 + cpu) {
      Add(s, t, offset, out);
      added.emplace_back(t, offset++);
    }
  }
  s.FinishRound(out);
  Add(s, 500, offset, out);
  added.emplace_back(500, offset++);
  s.FinishRound(out);  // everything up to round 1's newest goes
  s.Finish(out);
  std::stable_sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ASSERT_EQ(out.offsets.size(), added.size());
  for (size_t i = 0; i < added.size(); ++i) {
    EXPECT_EQ(out.times[i], added[i].first) << i;
    EXPECT_EQ(out.offsets[i], added[i].second) << i;
  }
  EXPECT_EQ(s.late(), 0u);
}

TEST(RoundSorter, LateRecordsGoOutAtOnce) {
  RoundSorter s(1 << 20);
  Out out;
  Add(s, 10, 1, out);
  s.FinishRound(out);
  Add(s, 20, 2, out);
  s.FinishRound(out);  // 10 goes
  Add(s, 5, 3, out);   // older than what went out
  EXPECT_EQ(out.times, (std::vector<uint64_t>{10, 5}));
  EXPECT_EQ(s.late(), 1u);
  s.Finish(out);
  EXPECT_EQ(out.times, (std::vector<uint64_t>{10, 5, 20}));
}

TEST(RoundSorter, BudgetForcesTheOldestHalfOut) {
  RoundSorter s(16 * 100);
  Out out;
  for (uint64_t t = 1000; t > 0; --t) Add(s, t, t % 256, out);
  EXPECT_GT(s.overflows(), 0u);
  EXPECT_LE(s.queued(), 101u);
  s.Finish(out);
  EXPECT_EQ(out.times.size(), 1000u);
}

}  // namespace
}  // namespace jitdump::perfdata
