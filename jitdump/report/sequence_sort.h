// Sorting sequences of numbers (stacks as arrays of frame tokens) lexicographically, a sequence
// before every longer one it is a prefix of: the folded stacks' order, tens of thousands of stacks
// that share long prefixes (a thread's entry frames).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump::report {

namespace sequence_sort_detail {

// SortSequences over [first, last) with keys[i] the token of first[i] at `depth`, each key moved
// with its index: the partitions at one depth read the tokens from this array in a row, where
// reading them through token_at again at every level of the recursion was a scattered read of
// each sequence per level (the cost of the sort on a profile's stacks, which do not fit in the
// CPU's caches).
template <typename TokenAt>
void SortKeyed(uint32_t* first, uint32_t* last, int64_t* keys, size_t depth, const TokenAt& token_at) {
  while (last - first > 1) {
    const size_t n = static_cast<size_t>(last - first);
    const int64_t pivot = keys[n / 2];
    size_t lt = 0;  // [0, lt) < pivot, [lt, i) == pivot, [gt, n) > pivot
    size_t gt = n;
    for (size_t i = 0; i < gt;) {
      const int64_t t = keys[i];
      if (t < pivot) {
        std::swap(first[lt], first[i]);
        std::swap(keys[lt++], keys[i++]);
      } else if (t > pivot) {
        --gt;
        std::swap(first[i], first[gt]);
        std::swap(keys[i], keys[gt]);
      } else {
        ++i;
      }
    }
    SortKeyed(first, first + lt, keys, depth, token_at);
    SortKeyed(first + gt, last, keys + gt, depth, token_at);
    if (pivot < 0) return;  // the sequences equal to the pivot all end here: they are equal
    // The equal range goes on at the next token, without recursion (stacks are deep), past the
    // tokens all of it shares. The shortest run so far bounds each comparison.
    last = first + gt;
    first += lt;
    keys += lt;
    ++depth;
    if (last - first > 1) {
      size_t run = SIZE_MAX;
      for (const uint32_t* i = first + 1; i < last && run > 0; ++i) {
        size_t shared = 0;
        while (shared < run) {
          const int64_t t = token_at(*first, depth + shared);
          if (t < 0 || t != token_at(*i, depth + shared)) break;
          ++shared;
        }
        run = shared;
      }
      depth += run;
      for (size_t i = 0; i < static_cast<size_t>(last - first); ++i) keys[i] = token_at(first[i], depth);
    }
  }
}

}  // namespace sequence_sort_detail

// Sorts the sequence indexes [first, last), whose sequences share their first `depth` tokens, by
// the tokens after them. `token_at(index, depth)` is the sequence's token at `depth` (0 to
// INT64_MAX), or -1 past its end. A three-way radix quicksort (Bentley and Sedgewick's multikey
// quicksort): each token of a shared prefix is looked at about once per partition level, where a
// comparison sort would compare the whole prefix again at every comparison. Equal sequences end
// up next to each other in no particular order. Small ranges are partitioned the same way, not
// handed to an insertion sort, which would walk runs of equal or nearly equal sequences whole
// again at every comparison. The tokens at the depth being partitioned are kept beside the
// indexes (sequence_sort_detail::SortKeyed): 8 bytes per sequence while it sorts.
//
// Where the sequences equal to a pivot go on to the next token, the run of tokens they all share
// from there is skipped in one pass that reads each sequence's tokens in a row, compared with the
// first's (a pass per token would read every sequence's token at that depth, one scattered read
// each, and move none of them: the order comes out the same).
template <typename TokenAt>
void SortSequences(uint32_t* first, uint32_t* last, size_t depth, const TokenAt& token_at) {
  if (last - first < 2) return;
  std::vector<int64_t> keys(static_cast<size_t>(last - first));
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = token_at(first[i], depth);
  sequence_sort_detail::SortKeyed(first, last, keys.data(), depth, token_at);
}

}  // namespace jitdump::report
