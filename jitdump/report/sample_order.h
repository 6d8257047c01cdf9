// The order of a Profile's samples by their paths: process, then locations from the root. Samples
// that share a path's beginning come next to each other, which the outputs that walk the samples
// as a tree use (folded stacks, the flame graph: a sample shares the nodes of the one before it up
// to the first location that differs) and which compresses better (pprof: similar stacks within
// deflate's window). Sorted once for all of them: the sort is a sizeable part of each. A profile
// from ProfileBuilder::Take is in this order already (its samples made so, in a row in memory).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "jitdump/report/profile.h"
#include "jitdump/report/sequence_sort.h"

namespace jitdump::report {

// Whether sample `a`'s path comes after sample `b`'s: by process, then locations outermost
// first, a path before every longer one it begins.
inline bool PathAfter(const Sample& a, const Sample& b) {
  if (a.process != b.process) return a.process > b.process;
  return std::lexicographical_compare(b.locations.rbegin(), b.locations.rend(), a.locations.rbegin(), a.locations.rend());
}

// Indexes into profile.samples, sorted by (process, locations outermost first), a path before
// every longer one it begins. Only the samples are read: a dangling index is sorted like any other.
// Samples already in that order (ProfileBuilder::Take makes them so) keep theirs: one pass that
// compares each with the one before.
inline std::vector<uint32_t> SamplesByPath(const Profile& profile) {
  const std::vector<Sample>& samples = profile.samples;
  std::vector<uint32_t> order(samples.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  bool sorted = true;
  for (size_t i = 1; i < samples.size() && sorted; ++i) sorted = !PathAfter(samples[i - 1], samples[i]);
  if (sorted) return order;
  // Token 0 is the process, token d >= 1 the location d from the root (locations[size - d]).
  auto token_at = [&](uint32_t sample, size_t depth) -> int64_t {
    if (depth == 0) return samples[sample].process;
    const std::vector<uint32_t>& locations = samples[sample].locations;
    return depth <= locations.size() ? int64_t{locations[locations.size() - depth]} : int64_t{-1};
  };
  SortSequences(order.data(), order.data() + order.size(), 0, token_at);
  return order;
}

}  // namespace jitdump::report
