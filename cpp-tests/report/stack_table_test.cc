// StackTable: a stack added again counts into the first one; stacks that differ anywhere (a
// location, the length, the process, the thread) stay apart; locations of every size come back
// as they went in (16 or 32 bits a stack), records longer than a chunk included; stacks
// come back in the order first added, whatever the table's growth did to its slots; AddLater
// counts as Add once flushed; SortByPath orders them by process and path from the root, the same
// path in several threads in the order first added, four locations at a time or (past 65,534
// locations) one.
#include "jitdump/report/stack_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace jitdump::report {
namespace {

std::vector<uint32_t> LocationsOf(const StackTable& t, size_t i) {
  std::vector<uint32_t> out{99, 98};  // replaced, not appended to
  t.Get(i, &out);
  return out;
}

TEST(StackTableTest, CountsRepeatsIntoTheFirstAndKeepsDifferentStacksApart) {
  StackTable t;
  const std::vector<uint32_t> a{1, 2, 3}, prefix{1, 2}, other{1, 2, 4}, longer{1, 2, 3, 0};
  t.Add(a, 0, 0, 1, 250);
  t.Add(prefix, 0, 0, 1, 250);
  t.Add(a, 0, 1, 1, 250);  // another thread
  t.Add(a, 1, 0, 1, 250);  // another process
  t.Add(other, 0, 0, 1, 250);
  t.Add(longer, 0, 0, 1, 250);
  t.Add(a, 0, 0, 2, 500);
  t.Add({}, 0, 0, 1, 0);
  t.Add({}, 0, 0, 1, 0);
  ASSERT_EQ(t.size(), 7u);
  std::vector<uint32_t> locations;
  StackTable::Stack s = t.Get(0, &locations);
  EXPECT_EQ(locations, a);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.nanos, 750u);
  EXPECT_EQ(s.process, 0u);
  EXPECT_EQ(s.thread, 0u);
  EXPECT_EQ(LocationsOf(t, 1), prefix);
  s = t.Get(2, &locations);
  EXPECT_EQ(s.thread, 1u);
  EXPECT_EQ(s.count, 1u);
  s = t.Get(3, &locations);
  EXPECT_EQ(s.process, 1u);
  EXPECT_EQ(LocationsOf(t, 4), other);
  EXPECT_EQ(LocationsOf(t, 5), longer);
  s = t.Get(6, &locations);
  EXPECT_TRUE(locations.empty());
  EXPECT_EQ(s.count, 2u);
}

TEST(StackTableTest, LocationsOfEveryWidthComeBackUnchanged) {
  StackTable t;
  const std::vector<uint32_t> edges{0,          1,          0x7f,       0x80,       0x3fff,     0x4000,
                                    0x1fffff,   0x200000,   0xfffffff,  0x10000000, UINT32_MAX, UINT32_MAX - 1};
  t.Add(edges, 3, 4, 1, 0);
  // The same bytes in 16 bits four frames and in 32 bits two frames: different stacks.
  const std::vector<uint32_t> narrow{1, 0, 2, 0}, wide{1, 2 | 0x10000u}, narrow_again{1, 0, 2, 0};
  const std::vector<uint32_t> widest_narrow{UINT16_MAX, 0}, narrowest_wide{UINT16_MAX + 1u, 0};
  t.Add(narrow, 3, 4, 1, 0);
  t.Add(wide, 3, 4, 1, 0);
  t.Add(widest_narrow, 3, 4, 1, 0);
  t.Add(narrowest_wide, 3, 4, 1, 0);
  t.Add(edges, 3, 4, 1, 0);
  t.Add(narrow_again, 3, 4, 1, 0);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(LocationsOf(t, 0), edges);
  EXPECT_EQ(LocationsOf(t, 1), narrow);
  EXPECT_EQ(LocationsOf(t, 2), wide);
  EXPECT_EQ(LocationsOf(t, 3), widest_narrow);
  EXPECT_EQ(LocationsOf(t, 4), narrowest_wide);
  std::vector<uint32_t> locations;
  EXPECT_EQ(t.Get(1, &locations).count, 2u);
  EXPECT_EQ(t.Get(0, &locations).count, 2u);
}

TEST(StackTableTest, KeepsIndexesBelow65536In16Bits) {
  StackTable t;
  std::vector<uint32_t> narrow(64), wide(64);
  for (uint32_t k = 0; k < 64; ++k) {
    narrow[k] = UINT16_MAX - k;
    wide[k] = k;
  }
  wide[63] = UINT16_MAX + 1u;
  t.Add(narrow, 0, 0, 1, 0);
  const uint64_t narrow_bytes = t.record_bytes();
  t.Add(wide, 0, 0, 1, 0);
  const uint64_t wide_bytes = t.record_bytes() - narrow_bytes;
  EXPECT_EQ(wide_bytes - narrow_bytes, 64u * 2);
  EXPECT_EQ(LocationsOf(t, 0), narrow);
  EXPECT_EQ(LocationsOf(t, 1), wide);
}

TEST(StackTableTest, ManyStacksAndStacksLongerThanAChunkKeepTheirOrderAndCounts) {
  StackTable t;
  constexpr uint32_t kStacks = 50000;
  // Deep stacks of large indexes (4 bytes each): 300,000 frames is 1.2 MB, more than a chunk.
  const std::vector<uint32_t> deep(300000, UINT32_MAX - 7);
  std::vector<uint32_t> deeper = deep;
  deeper.back() = 5;
  for (int round = 0; round < 2; ++round) {
    for (uint32_t i = 0; i < kStacks; ++i) {
      if (i == 1000) t.Add(deep, 0, 0, 1, 10);
      if (i == 30000) t.Add(deeper, 0, 0, 1, 10);
      std::vector<uint32_t> stack(1 + i % 70);
      for (uint32_t k = 0; k < stack.size(); ++k) stack[k] = i * 131 + k;
      t.Add(stack, i % 3, i % 2, 1, 1);
    }
  }
  ASSERT_EQ(t.size(), kStacks + 2);
  std::vector<uint32_t> locations;
  size_t made = 0;
  for (uint32_t i = 0; i < kStacks; ++i) {
    if (i == 1000 || i == 30000) {
      const StackTable::Stack s = t.Get(made++, &locations);
      EXPECT_EQ(locations, i == 1000 ? deep : deeper);
      EXPECT_EQ(s.count, 2u);
      EXPECT_EQ(s.nanos, 20u);
    }
    const StackTable::Stack s = t.Get(made++, &locations);
    ASSERT_EQ(locations.size(), 1 + i % 70) << i;
    EXPECT_EQ(locations.front(), i * 131) << i;
    EXPECT_EQ(locations.back(), i * 131 + i % 70) << i;
    EXPECT_EQ(s.process, i % 3);
    EXPECT_EQ(s.thread, i % 2);
    EXPECT_EQ(s.count, 2u);
  }
}

// AddLater holds a stack back until the next AddLater, Add or Flush, and counts it as Add would:
// one held back and added again meets its own record, many in a row (the table growing between
// them) each keep their counts and their order.
TEST(StackTableTest, AddLaterCountsAsAddOnceFlushed) {
  StackTable t;
  const std::vector<uint32_t> a{1, 2, 3}, b{7, 70000};
  t.AddLater(a, 0, 0, 1, 10);
  EXPECT_EQ(t.size(), 0u);  // held back
  t.AddLater(a, 0, 0, 2, 20);
  EXPECT_EQ(t.size(), 1u);
  t.Add(b, 0, 1, 1, 5);  // flushes the second `a` first
  t.Flush();
  t.Flush();  // nothing held: no stack counted twice
  ASSERT_EQ(t.size(), 2u);
  std::vector<uint32_t> locations;
  StackTable::Stack s = t.Get(0, &locations);
  EXPECT_EQ(locations, a);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.nanos, 30u);
  s = t.Get(1, &locations);
  EXPECT_EQ(locations, b);
  EXPECT_EQ(s.count, 1u);

  StackTable many;
  constexpr uint32_t kStacks = 50000;
  for (int round = 0; round < 2; ++round) {
    for (uint32_t i = 0; i < kStacks; ++i) {
      std::vector<uint32_t> stack(1 + i % 30);
      for (uint32_t k = 0; k < stack.size(); ++k) stack[k] = i * 7 + k;
      many.AddLater(stack, 0, i % 4, 1, 1);
    }
  }
  many.Flush();
  ASSERT_EQ(many.size(), kStacks);
  for (uint32_t i = 0; i < kStacks; ++i) {
    s = many.Get(i, &locations);
    ASSERT_EQ(locations.size(), 1 + i % 30) << i;
    EXPECT_EQ(locations.front(), i * 7) << i;
    EXPECT_EQ(s.thread, i % 4);
    EXPECT_EQ(s.count, 2u) << i;
  }
}

// SortByPath counts a stack still held back.
TEST(StackTableTest, SortByPathFlushesFirst) {
  StackTable t;
  t.AddLater(std::vector<uint32_t>{5, 9}, 0, 0, 1, 0);
  t.SortByPath();
  ASSERT_EQ(t.size(), 1u);
  std::vector<uint32_t> locations;
  EXPECT_EQ(t.Get(0, &locations).count, 1u);
  EXPECT_EQ(locations, (std::vector<uint32_t>{5, 9}));
}

// SortByPath's order is a stable sort of the stacks in the order first added, by process and then
// locations from the root (a path before every longer one it begins): stacks of several lengths
// around the four-location blocks, one path in several threads, in a table whose locations fit
// 16 bits and in one with a location past them.
TEST(StackTableTest, SortByPathIsAStableSortByProcessAndPathFromTheRoot) {
  for (const uint32_t top : {uint32_t{9}, uint32_t{70000}}) {
    for (uint32_t seed = 1; seed <= 10; ++seed) {
      std::mt19937 random(seed);
      struct Made {
        uint32_t process, thread;
        std::vector<uint32_t> locations;  // leaf first
      };
      std::vector<Made> made;
      StackTable t;
      const std::vector<uint32_t> root = {3, 1, 4, 1, 5, 9, 2, 6};
      for (size_t i = 0, n = 50 + random() % 2000; i < n; ++i) {
        std::vector<uint32_t> path(root.begin(), root.begin() + static_cast<std::ptrdiff_t>(random() % (root.size() + 1)));
        for (size_t k = random() % 12; k > 0; --k) path.push_back(random() % 4);
        if (random() % 50 == 0) path.push_back(top);
        std::vector<uint32_t> leaf_first(path.rbegin(), path.rend());
        const uint32_t process = random() % 2;
        const uint32_t thread = random() % 3;
        const size_t before = t.size();
        t.Add(leaf_first, process, thread, 1, 0);
        if (t.size() > before) made.push_back(Made{process, thread, std::move(leaf_first)});
      }
      std::vector<size_t> expected(made.size());
      std::iota(expected.begin(), expected.end(), 0);
      std::stable_sort(expected.begin(), expected.end(), [&](size_t a, size_t b) {
        if (made[a].process != made[b].process) return made[a].process < made[b].process;
        return std::lexicographical_compare(made[a].locations.rbegin(), made[a].locations.rend(),
                                            made[b].locations.rbegin(), made[b].locations.rend());
      });
      t.SortByPath();
      ASSERT_EQ(t.size(), made.size());
      for (size_t i = 0; i < made.size(); ++i) {
        std::vector<uint32_t> locations;
        const StackTable::Stack s = t.Get(i, &locations);
        const Made& want = made[expected[i]];
        ASSERT_EQ(locations, want.locations) << "top " << top << " seed " << seed << " at " << i;
        ASSERT_EQ(s.process, want.process) << i;
        ASSERT_EQ(s.thread, want.thread) << i;
      }
    }
  }
}

}  // namespace
}  // namespace jitdump::report
