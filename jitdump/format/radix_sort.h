// A stable sort of (key, value) pairs by key: what std::sort over the pairs gives when pairs with
// equal keys come in the order of their values (indexes made in order, mostly), without a
// comparison per step. The report's large sorts by a number (a library's 50,000+ symbols by
// start, a profile's locations by how many samples name them) made by comparisons branch
// either way at every step and, through indexes, read scattered memory: sorting libjvm.so's
// symbols that way was a fifth of loading them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump {

// Least-significant digit first, 11 bits a pass, over the keys' offsets from the lowest: as
// many passes as the span of the keys needs (a library's offsets two, a kernel's addresses
// three, counts of samples two). Pairs with equal keys keep the order they came in. Small
// inputs go to std::stable_sort.
inline void StableRadixSort(std::vector<std::pair<uint64_t, uint32_t>>& pairs) {
  constexpr size_t kSmall = 256;
  if (pairs.size() < kSmall) {
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return;
  }
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (const auto& pair : pairs) {
    lowest = std::min(lowest, pair.first);
    highest = std::max(highest, pair.first);
  }
  constexpr unsigned kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<std::pair<uint64_t, uint32_t>> other(pairs.size());
  std::vector<size_t> counts(kBuckets);
  for (unsigned shift = 0; shift < 64 && ((highest - lowest) >> shift) != 0; shift += kBits) {
    auto digit = [&](const std::pair<uint64_t, uint32_t>& pair) { return ((pair.first - lowest) >> shift) & (kBuckets - 1); };
    std::fill(counts.begin(), counts.end(), 0);
    for (const auto& pair : pairs) ++counts[digit(pair)];
    size_t at = 0;
    for (size_t& count : counts) at += std::exchange(count, at);
    for (const auto& pair : pairs) other[counts[digit(pair)]++] = pair;
    pairs.swap(other);
  }
}

}  // namespace jitdump
