// The order of a Profile's samples by their paths: process, then locations from the root. Samples
// that share a path's beginning come next to each other, which the outputs that walk the samples
// as a tree use (folded stacks, the flame graph: a sample shares the nodes of the one before it up
// to the first location that differs) and which compresses better (pprof: similar stacks within
// deflate's window). Sorted once for all of them: the sort is a sizeable part of each.
#pragma once

#include <cstdint>
#include <vector>

#include "jitdump/report/profile.h"
#include "jitdump/report/sequence_sort.h"

namespace jitdump::report {

// Indexes into profile.samples, sorted by (process, locations outermost first), a path before
// every longer one it begins. Only the samples are read: a dangling index is sorted like any other.
inline std::vector<uint32_t> SamplesByPath(const Profile& profile) {
  const std::vector<Sample>& samples = profile.samples;
  std::vector<uint32_t> order(samples.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  SortSequences(order.data(), order.data() + order.size(), 0, [&](uint32_t sample, size_t depth) -> int64_t {
    if (depth == 0) return samples[sample].process;
    const std::vector<uint32_t>& locations = samples[sample].locations;
    return depth <= locations.size() ? int64_t{locations[locations.size() - depth]} : int64_t{-1};
  });
  return order;
}

}  // namespace jitdump::report
