// Sorting sequences of numbers (stacks as arrays of frame tokens) lexicographically, a sequence
// before every longer one it is a prefix of: the folded stacks' order, tens of thousands of stacks
// that share long prefixes (a thread's entry frames).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace jitdump::report {

// Sorts the sequence indexes [first, last), whose sequences share their first `depth` tokens, by
// the tokens after them. `token_at(index, depth)` is the sequence's token at `depth` (0 to
// INT64_MAX), or -1 past its end. A three-way radix quicksort (Bentley and Sedgewick's multikey
// quicksort): each token of a shared prefix is looked at about once per partition level, where a
// comparison sort would compare the whole prefix again at every comparison. Equal sequences end
// up next to each other in no particular order. Small ranges are partitioned the same way, not
// handed to an insertion sort, which would walk runs of equal or nearly equal sequences whole
// again at every comparison.
//
// Where the sequences equal to a pivot go on to the next token, the run of tokens they all share
// from there is skipped in one pass that reads each sequence's tokens in a row, compared with the
// first's (a pass per token would read every sequence's token at that depth, one scattered read
// each, and move none of them: the order comes out the same).
template <typename TokenAt>
void SortSequences(uint32_t* first, uint32_t* last, size_t depth, const TokenAt& token_at) {
  while (last - first > 1) {
    const int64_t pivot = token_at(first[(last - first) / 2], depth);
    uint32_t* lt = first;  // [first, lt) < pivot, [lt, i) == pivot, [gt, last) > pivot
    uint32_t* gt = last;
    for (uint32_t* i = first; i < gt;) {
      const int64_t t = token_at(*i, depth);
      if (t < pivot) {
        std::swap(*lt++, *i++);
      } else if (t > pivot) {
        std::swap(*i, *--gt);
      } else {
        ++i;
      }
    }
    SortSequences(first, lt, depth, token_at);
    SortSequences(gt, last, depth, token_at);
    if (pivot < 0) return;  // the sequences equal to the pivot all end here: they are equal
    // The equal range goes on at the next token, without recursion (stacks are deep), past the
    // tokens all of it shares. The shortest run so far bounds each comparison.
    first = lt;
    last = gt;
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
    }
  }
}

}  // namespace jitdump::report
