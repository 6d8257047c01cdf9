// jitdump/format/radix_sort.h: the order std::stable_sort gives by key, for keys of every span
// (one pass, several, all 64 bits, a single key), equal keys in the order given, and small inputs.
#include "jitdump/format/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace jitdump {
namespace {

using Pairs = std::vector<std::pair<uint64_t, uint32_t>>;

Pairs StableSorted(Pairs pairs) {
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return pairs;
}

TEST(RadixSortTest, GivesTheStableSortsOrderForKeysOfEverySpan) {
  std::mt19937_64 random(42);
  const uint64_t kBase = 0xffffffff81000000ull;
  for (const uint64_t span : {uint64_t{1}, uint64_t{7}, uint64_t{2047}, uint64_t{1} << 22, uint64_t{1} << 40, UINT64_MAX}) {
    for (const size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{255}, size_t{256}, size_t{5000}}) {
      Pairs pairs;
      for (uint32_t i = 0; i < size; ++i) {
        // Keys drawn from few values as often as from many: runs of equal keys.
        const uint64_t key = span == UINT64_MAX ? random() : kBase + random() % (i % 2 == 0 ? span : 3);
        pairs.emplace_back(key, i);
      }
      const Pairs expected = StableSorted(pairs);
      StableRadixSort(pairs);
      EXPECT_EQ(pairs, expected) << "span " << span << " size " << size;
    }
  }
}

// Values in no order keep that order among equal keys: the sort never looks at them.
TEST(RadixSortTest, EqualKeysKeepTheOrderGivenWhateverTheValues) {
  Pairs pairs;
  for (uint32_t i = 0; i < 3000; ++i) pairs.emplace_back(i % 3 == 0 ? uint64_t{5} : uint64_t{1} << 30, 3000 - i);
  const Pairs expected = StableSorted(pairs);
  StableRadixSort(pairs);
  EXPECT_EQ(pairs, expected);
}

}  // namespace
}  // namespace jitdump
