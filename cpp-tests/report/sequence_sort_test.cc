// SortSequences and SortSequenceBlocks against std::stable_sort with a plain lexicographic
// comparison: sequences that are prefixes of one another, long shared prefixes, duplicates (in the
// order of their indexes), empty sequences, small ranges, several tokens to a block.
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

// The order every sort here must give: lexicographic, a sequence before every longer one it
// begins, equal sequences in the order of their indexes.
std::vector<uint32_t> StableSorted(const Sequences& sequences) {
  std::vector<uint32_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return sequences[a] < sequences[b]; });
  return order;
}

// SortSequenceBlocks with `per_block` tokens of 16 bits to a block (token + 1; 0 past the end).
std::vector<uint32_t> SortedInBlocks(const Sequences& sequences, size_t per_block) {
  std::vector<uint32_t> order(sequences.size());
  std::iota(order.begin(), order.end(), 0);
  SortSequenceBlocks(
      order.data(), order.data() + order.size(), 0,
      [&](uint32_t s, size_t level) {
        uint64_t block = 0;
        for (size_t d = level * per_block; d < (level + 1) * per_block; ++d) {
          block = block << 16 | (d < sequences[s].size() ? uint64_t{sequences[s][d]} + 1 : 0);
        }
        return block;
      },
      [](uint64_t block) { return (block & 0xffff) == 0; });
  return order;
}

Sequences ProfileLike(uint32_t seed) {
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
  return sequences;
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
    const Sequences sequences = ProfileLike(seed);
    Sequences expected = sequences;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(InOrder(sequences, Sorted(sequences)), expected) << "seed " << seed;
  }
}

// Equal sequences (a stack in several threads) come out in the order of their indexes: the
// permutation is a stable sort's, whatever the partitions and the skipped runs did on the way
// (what lets StackTable::SortByPath and SamplesByPath give one order).
TEST(SequenceSortTest, EqualSequencesKeepTheOrderOfTheirIndexes) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Sequences sequences = ProfileLike(seed);
    EXPECT_EQ(Sorted(sequences), StableSorted(sequences)) << "seed " << seed;
  }
  const Sequences sequences = {{1, 2, 3}, {1, 2}, {}, {1}, {0, 5}, {1, 2, 3, 0}, {2}, {1, 2, 3}, {}};
  EXPECT_EQ(Sorted(sequences), StableSorted(sequences));
}

// Several tokens to a block give the permutation one token at a time gives: sequences that end
// inside a block, at its end, and that differ only in a block's last token.
TEST(SequenceSortTest, BlocksOfSeveralTokensGiveTheSameOrder) {
  for (size_t per_block : {1, 2, 3, 4}) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
      const Sequences sequences = ProfileLike(seed);
      EXPECT_EQ(SortedInBlocks(sequences, per_block), StableSorted(sequences)) << per_block << " seed " << seed;
    }
    const Sequences sequences = {{1, 2, 3, 4}, {1, 2, 3}, {1, 2, 3, 4, 0}, {}, {1, 2, 3, 5}, {1, 2, 3, 4},
                                 {0},          {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 9}, {1, 2, 3, 4, 5, 6, 7, 8}};
    EXPECT_EQ(SortedInBlocks(sequences, per_block), StableSorted(sequences)) << per_block;
  }
}

TEST(SequenceSortTest, EmptyAndSingle) {
  EXPECT_TRUE(Sorted({}).empty());
  EXPECT_EQ(Sorted({{4, 2}}), std::vector<uint32_t>{0});
}

}  // namespace
}  // namespace jitdump::report
