// LoadTimeline answers what FindLoadAt answers (the reader's slow reference), on random dumps
// full of reused and partly overlapping code, for queries in time order (perf's) and not.
#include "jitdump/report/load_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/read/decoder.h"

namespace jitdump::report {
namespace {

using jitdump::testing::Builder;

JitDump RandomDump(std::mt19937_64& rng, int loads, bool monotonic) {
  Builder b;
  b.Header();
  uint64_t t = 1000;
  for (int i = 0; i < loads; ++i) {
    // A 4 KiB window so loads overlap and reuse addresses all the time.
    const uint64_t addr = 0x10000 + (rng() % 0x1000 & ~uint64_t{0xf});
    const uint64_t size = 0x10 + rng() % 0x200;
    t += rng() % 50;
    // Backdated dumps are stamped out of file order; equal timestamps happen too.
    const uint64_t stamp = monotonic ? t : (rng() % 4 == 0 ? t - rng() % 200 : t);
    b.Load(stamp, addr, rng() % 10 == 0 ? 0 : size, static_cast<uint64_t>(i), "m" + std::to_string(i));
  }
  return Parse(b.bytes());
}

// The reference: FindLoadAt, or the earliest covering load when every one is later.
LoadTimeline::Hit Reference(const JitDump& dump, uint64_t addr, uint64_t time) {
  const int64_t at = FindLoadAt(dump, addr, time);
  if (at >= 0) return {at, false};
  int64_t first = -1;
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* l = dump.records[i].load();
    if (l == nullptr || addr < l->code_addr || addr - l->code_addr >= l->code_size) continue;
    if (first < 0 || dump.records[i].timestamp < dump.records[static_cast<size_t>(first)].timestamp) {
      first = static_cast<int64_t>(i);
    }
  }
  return {first, first >= 0};
}

void CheckAgainstReference(uint64_t seed, bool monotonic, bool time_ordered) {
  std::mt19937_64 rng(seed);
  const JitDump dump = RandomDump(rng, 300, monotonic);
  ASSERT_TRUE(dump.header_ok);
  LoadTimeline timeline(dump);
  const CodeMap final_map(dump);
  std::vector<std::pair<uint64_t, uint64_t>> queries;  // (time, addr)
  for (int i = 0; i < 3000; ++i) queries.emplace_back(900 + rng() % 16000, 0xff00 + rng() % 0x1400);
  if (time_ordered) std::sort(queries.begin(), queries.end());
  for (const auto& [time, addr] : queries) {
    const LoadTimeline::Hit want = Reference(dump, addr, time);
    const LoadTimeline::Hit got = timeline.Find(addr, time);
    ASSERT_EQ(got.record, want.record) << "addr 0x" << std::hex << addr << std::dec << " time " << time;
    ASSERT_EQ(got.before_load, want.before_load) << "addr 0x" << std::hex << addr;
    ASSERT_EQ(timeline.FindFinal(addr), final_map.Find(addr));
  }
  if (time_ordered) {
    EXPECT_EQ(timeline.rewinds(), 0u);
  }
}

TEST(LoadTimeline, MatchesFindLoadAtInTimeOrder) {
  for (uint64_t seed = 1; seed <= 5; ++seed) CheckAgainstReference(seed, true, true);
}

TEST(LoadTimeline, MatchesFindLoadAtWithBackdatedStamps) {
  for (uint64_t seed = 11; seed <= 15; ++seed) CheckAgainstReference(seed, false, true);
}

TEST(LoadTimeline, MatchesFindLoadAtInAnyOrder) {
  for (uint64_t seed = 21; seed <= 23; ++seed) CheckAgainstReference(seed, false, false);
}

TEST(LoadTimeline, CodeCacheReuse) {
  Builder b;
  b.Header();
  b.Load(100, 0x5000, 0x100, 0, "first");                // records[0]
  b.Load(200, 0x5000, 0x100, 1, "second");               // records[1]: reuses first's range
  b.Load(300, 0x5080, 0x10, 2, "third, inside second");  // records[2]
  const JitDump dump = Parse(b.bytes());
  LoadTimeline t(dump);
  // Before any load: the first load that ever covered the address, flagged.
  EXPECT_EQ(t.Find(0x5010, 50).record, 0);
  EXPECT_TRUE(t.Find(0x5010, 50).before_load);
  EXPECT_EQ(t.Find(0x5010, 150).record, 0);
  EXPECT_FALSE(t.Find(0x5010, 150).before_load);
  EXPECT_EQ(t.Find(0x5010, 250).record, 1);
  EXPECT_EQ(t.Find(0x5085, 250).record, 1);
  EXPECT_EQ(t.Find(0x5085, 350).record, 2);
  EXPECT_EQ(t.Find(0x5095, 350).record, 1);  // past third: second's code again
  EXPECT_EQ(t.Find(0x5100, 350).record, -1);
  EXPECT_EQ(t.FindFinal(0x5010), 1);
  EXPECT_EQ(t.FindFinal(0x5085), 2);
  // An earlier query after a later one (input not in time order) rewinds and stays right.
  EXPECT_EQ(t.Find(0x5085, 150).record, 0);
  EXPECT_EQ(t.rewinds(), 1u);
}

TEST(LoadTimeline, EqualTimestampsFollowFileOrder) {
  Builder b;
  b.Header();
  b.Load(100, 0x5000, 0x100, 0, "a");
  b.Load(100, 0x5000, 0x100, 1, "b");
  const JitDump dump = Parse(b.bytes());
  LoadTimeline t(dump);
  EXPECT_EQ(t.Find(0x5000, 100).record, 1);
  EXPECT_EQ(t.Find(0x5000, 99).record, 0);  // both later: the first in file order
}

}  // namespace
}  // namespace jitdump::report
