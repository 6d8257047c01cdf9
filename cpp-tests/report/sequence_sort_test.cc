// SortSequences against std::sort with a plain lexicographic comparison: sequences that are
// prefixes of one another, long shared prefixes, duplicates, empty sequences, small ranges.
#include "jitdump/report/sequence_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace jitdump::report {
namespace {

using Sequences = std::vector<std::vector<uint32_t>>;

std::vector<uint32_t> Sorted(const Sequences& sequences) {
  std::vector<uint32_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  SortSequences(order.data(), order.data() + order.size(), 0, [&](uint32_t s, size_t depth) {
    return depth < sequences[s].size() ? int64_t{sequences[s][depth]} : int64_t{-1};
  });
  return order;
}

// Bentley and Sedgewick's multikey quicksort as published, a token at a time: the permutation
// SortSequences must give, skipping the runs an equal range shares in one pass.
void TokenAtATime(const Sequences& sequences, uint32_t* first, uint32_t* last, size_t depth) {
  auto token_at = [&](uint32_t s) { return depth < sequences[s].size() ? int64_t{sequences[s][depth]} : int64_t{-1}; };
  if (last - first <= 1) return;
  const int64_t pivot = token_at(first[(last - first) / 2]);
  uint32_t* lt = first;
  uint32_t* gt = last;
  for (uint32_t* i = first; i < gt;) {
    const int64_t t = token_at(*i);
    if (t < pivot) {
      std::swap(*lt++, *i++);
    } else if (t > pivot) {
      std::swap(*i, *--gt);
    } else {
      ++i;
    }
  }
  TokenAtATime(sequences, first, lt, depth);
  TokenAtATime(sequences, gt, last, depth);
  if (pivot >= 0) TokenAtATime(sequences, lt, gt, depth + 1);
}

std::vector<uint32_t> SortedTokenAtATime(const Sequences& sequences) {
  std::vector<uint32_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  TokenAtATime(sequences, order.data(), order.data() + order.size(), 0);
  return order;
}

// The sequences in the order `order` gives them (equal sequences may come in any order).
Sequences InOrder(const Sequences& sequences, const std::vector<uint32_t>& order) {
  Sequences out;
  for (uint32_t i : order) out.push_back(sequences[i]);
  return out;
}

TEST(SequenceSortTest, PrefixesComeFirst) {
  const Sequences sequences = {{1, 2, 3}, {1, 2}, {}, {1}, {0, 5}, {1, 2, 3, 0}, {2}};
  const Sequences expected = {{}, {0, 5}, {1}, {1, 2}, {1, 2, 3}, {1, 2, 3, 0}, {2}};
  EXPECT_EQ(InOrder(sequences, Sorted(sequences)), expected);
}

TEST(SequenceSortTest, MatchesLexicographicOrderOnDeepSharedPrefixes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 random(seed);
    // Stacks as a profile has them: a few common roots, deep shared prefixes, a small alphabet so
    // that duplicates and prefixes are frequent; sizes from one element to thousands.
    const size_t count = seed % 4 == 0 ? 5 : 50 + random() % 3000;
    const std::vector<uint32_t> root = {7, 3, 9, 9, 1, 4, 4, 8, 2, 6, 5, 0};
    Sequences sequences;
    for (size_t i = 0; i < count; ++i) {
      std::vector<uint32_t> s(root.begin(), root.begin() + static_cast<std::ptrdiff_t>(random() % (root.size() + 1)));
      for (size_t n = random() % 40; n > 0; --n) s.push_back(random() % (seed % 3 == 0 ? 2 : 6));
      sequences.push_back(std::move(s));
    }
    Sequences expected = sequences;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(InOrder(sequences, Sorted(sequences)), expected) << "seed " << seed;
  }
}

// Skipping the runs that a range of sequences shares moves no sequence: the permutation is the
// one a token at a time gives, equal sequences in the same places (what lets StackTable::SortByPath
// and SamplesByPath give one order).
TEST(SequenceSortTest, SkippingSharedRunsGivesTheSamePermutation) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 random(seed);
    const std::vector<uint32_t> root = {7, 3, 9, 9, 1, 4, 4, 8, 2, 6, 5, 0};
    Sequences sequences;
    for (size_t i = 0, count = 20 + random() % 2000; i < count; ++i) {
      std::vector<uint32_t> s(root.begin(), root.begin() + static_cast<std::ptrdiff_t>(random() % (root.size() + 1)));
      for (size_t n = random() % 40; n > 0; --n) s.push_back(random() % (seed % 3 == 0 ? 2 : 6));
      sequences.push_back(std::move(s));
    }
    EXPECT_EQ(Sorted(sequences), SortedTokenAtATime(sequences)) << "seed " << seed;
  }
  const Sequences sequences = {{1, 2, 3}, {1, 2}, {}, {1}, {0, 5}, {1, 2, 3, 0}, {2}, {1, 2, 3}};
  EXPECT_EQ(Sorted(sequences), SortedTokenAtATime(sequences));
}

TEST(SequenceSortTest, EmptyAndSingle) {
  EXPECT_TRUE(Sorted({}).empty());
  EXPECT_EQ(Sorted({{4, 2}}), std::vector<uint32_t>{0});
}

}  // namespace
}  // namespace jitdump::report
