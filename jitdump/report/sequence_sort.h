// Sorting sequences of numbers (stacks as arrays of frame tokens) lexicographically, a sequence
// before every longer one it is a prefix of: the folded stacks' order, tens of thousands of stacks
// that share long prefixes (a thread's entry frames).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump::report {

namespace sequence_sort_detail {

// How far ahead the keys' loops ask for a sequence (`prefetch`): the blocks of sequences that lie
// anywhere in memory are read one after another, each a miss unless asked for before.
inline constexpr size_t kPrefetchAhead = 8;

// SortSequenceBlocks over [first, last) with keys[i] the block of first[i] at `level`, each key
// moved with its index: the partitions at one level read the blocks from this array in a row,
// where reading them through block_at again at every level of the recursion was a scattered read
// of each sequence per level (the cost of the sort on a profile's stacks, which do not fit in the
// CPU's caches).
template <typename BlockAt, typename Ends, typename Prefetch>
void SortKeyed(uint32_t* first, uint32_t* last, uint64_t* keys, size_t level, const BlockAt& block_at,
               const Ends& ends, const Prefetch& prefetch) {
  while (last - first > 1) {
    const size_t n = static_cast<size_t>(last - first);
    const uint64_t pivot = keys[n / 2];
    size_t lt = 0;  // [0, lt) < pivot, [lt, i) == pivot, [gt, n) > pivot
    size_t gt = n;
    for (size_t i = 0; i < gt;) {
      const uint64_t b = keys[i];
      if (b < pivot) {
        std::swap(first[lt], first[i]);
        std::swap(keys[lt++], keys[i++]);
      } else if (b > pivot) {
        --gt;
        std::swap(first[i], first[gt]);
        std::swap(keys[i], keys[gt]);
      } else {
        ++i;
      }
    }
    SortKeyed(first, first + lt, keys, level, block_at, ends, prefetch);
    SortKeyed(first + gt, last, keys + gt, level, block_at, ends, prefetch);
    if (ends(pivot)) {
      // The sequences equal to the pivot all end in this block: they are equal, and keep the
      // order of their indexes.
      std::sort(first + lt, first + gt);
      return;
    }
    // The equal range goes on at the next block, without recursion (stacks are deep), past the
    // blocks all of it shares. The shortest run so far bounds each comparison.
    last = first + gt;
    first += lt;
    keys += lt;
    ++level;
    if (last - first > 1) {
      size_t run = SIZE_MAX;
      for (const uint32_t* i = first + 1; i < last && run > 0; ++i) {
        size_t shared = 0;
        while (shared < run) {
          const uint64_t b = block_at(*first, level + shared);
          if (ends(b) || b != block_at(*i, level + shared)) break;
          ++shared;
        }
        run = shared;
      }
      level += run;
      const size_t n = static_cast<size_t>(last - first);
      for (size_t i = 0; i < n; ++i) {
        if (i + kPrefetchAhead < n) prefetch(first[i + kPrefetchAhead]);
        keys[i] = block_at(first[i], level);
      }
    }
  }
}

}  // namespace sequence_sort_detail

// Sorts the sequence indexes [first, last), whose sequences share their first `level` blocks, by
// the blocks after them; equal sequences keep the order of their indexes (a stable sort of
// indexes made in order). A block is several tokens in one number, the first in its high bits:
// `block_at(index, level)` is the sequence's block at `level`, where a token past the end of the
// sequence counts as 0 and every other token as more, so comparing blocks as numbers compares the
// sequences token by token, a sequence before every longer one it begins. `ends(block)` says
// whether the sequence ends within the block (its last token there is past the end): sequences
// with equal blocks that end there are equal. A three-way radix quicksort (Bentley and
// Sedgewick's multikey quicksort) over the blocks: each block of a shared prefix is looked at
// about once per partition level, where a comparison sort would compare the whole prefix again at
// every comparison. Small ranges are partitioned the same way, not handed to an insertion sort,
// which would walk runs of equal or nearly equal sequences whole again at every comparison. The
// blocks at the level being partitioned are kept beside the indexes (8 bytes per sequence while
// it sorts). Several tokens to a block read a sequence's tokens several at a time: a stack's
// locations from one place in memory, which each level of the sort reads once.
//
// Where the sequences equal to a pivot go on to the next block, the run of blocks they all share
// from there is skipped in one pass that reads each sequence's blocks in a row, compared with the
// first's (a pass per block would read every sequence's block at that level, one scattered read
// each, and move none of them: the order comes out the same).
// `prefetch(index)` asks for what block_at will read of sequence `index` (a hint; it may do
// nothing).
template <typename BlockAt, typename Ends, typename Prefetch>
void SortSequenceBlocks(uint32_t* first, uint32_t* last, size_t level, const BlockAt& block_at, const Ends& ends,
                        const Prefetch& prefetch) {
  if (last - first < 2) return;
  std::vector<uint64_t> keys(static_cast<size_t>(last - first));
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + sequence_sort_detail::kPrefetchAhead < keys.size()) prefetch(first[i + sequence_sort_detail::kPrefetchAhead]);
    keys[i] = block_at(first[i], level);
  }
  sequence_sort_detail::SortKeyed(first, last, keys.data(), level, block_at, ends, prefetch);
}

template <typename BlockAt, typename Ends>
void SortSequenceBlocks(uint32_t* first, uint32_t* last, size_t level, const BlockAt& block_at, const Ends& ends) {
  SortSequenceBlocks(first, last, level, block_at, ends, [](uint32_t) {});
}

// SortSequenceBlocks with one token to a block: `token_at(index, depth)` is the sequence's token
// at `depth` (0 to INT64_MAX), or -1 past its end.
template <typename TokenAt>
void SortSequences(uint32_t* first, uint32_t* last, size_t depth, const TokenAt& token_at) {
  SortSequenceBlocks(
      first, last, depth,
      [&](uint32_t index, size_t at) { return static_cast<uint64_t>(token_at(index, at)) + 1; },
      [](uint64_t block) { return block == 0; });
}

}  // namespace jitdump::report
