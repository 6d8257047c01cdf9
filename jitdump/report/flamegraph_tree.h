// The call tree a flame graph draws: every sample's stack expanded into its inline frames, root
// first, identical paths merged and counted. Aggregating here is what keeps the page small and
// fast: a recording of millions of samples becomes one node per distinct call path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/report/flamegraph_options.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

// A distinct frame: one Profile function, or a pseudo frame (the root, a process, a thread, an
// address no function describes).
struct FlameFrame {
  std::string name;
  std::string file;  // source file of a Java frame; empty when unknown
  // FrameKindName() of the function, or "root", "process", "thread" for the pseudo frames.
  const char* kind = "unknown";
};

// How many of a node's samples were at one source line of its frame.
struct FlameLine {
  uint32_t line = 0;
  uint64_t samples = 0;
};

struct FlameNode {
  uint32_t frame = 0;  // index into FlameTree::frames
  uint32_t depth = 0;  // 0 for the root
  uint64_t total = 0;  // samples in this node and below
  // The node's known lines (line 0 is not listed), most samples first:
  // FlameTree::lines[first_line, first_line + line_count).
  uint32_t first_line = 0;
  uint32_t line_count = 0;
};

struct FlameTree {
  // Sorted by name, then kind, then file: a frame's index is its rank, and siblings are
  // ordered by it (alphabetically, as flamegraph.pl does, so two graphs compare side by side).
  std::vector<FlameFrame> frames;
  // Preorder: a node's children follow it, each followed by its own subtree.
  std::vector<FlameNode> nodes;
  // Every node's lines, node after node (one flat array: a tree of millions of nodes must not
  // cost an allocation per node).
  std::vector<FlameLine> lines;
};

// `profile` must pass CheckProfile. Counts are samples (Sample::count). `by_path`:
// SamplesByPath(profile) when the caller has it (the samples are sorted here otherwise).
FlameTree BuildFlameTree(const Profile& profile, const FlameGraphOptions& options,
                         const std::vector<uint32_t>* by_path = nullptr);

}  // namespace jitdump::report
