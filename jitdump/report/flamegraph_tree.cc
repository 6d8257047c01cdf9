#include "jitdump/report/flamegraph_tree.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace jitdump::report {
namespace {

struct BuildNode {
  uint32_t frame;
  uint32_t parent;
  uint32_t depth;
  uint64_t total = 0;
  std::vector<FlameLine> lines;
};

// Frames while building: Profile function i is frame i; pseudo frames are appended after them.
class FrameTable {
 public:
  explicit FrameTable(const Profile& profile) {
    frames_.reserve(profile.functions.size());
    for (const Function& f : profile.functions) frames_.push_back(FlameFrame{f.name, f.file, FrameKindName(f.kind)});
  }
  uint32_t Pseudo(std::string name, const char* kind) {
    const auto [it, inserted] =
        pseudo_ids_.try_emplace(std::string(kind) + '\0' + name, static_cast<uint32_t>(frames_.size()));
    if (inserted) frames_.push_back(FlameFrame{std::move(name), std::string(), kind});
    return it->second;
  }
  std::vector<FlameFrame>& frames() { return frames_; }

 private:
  std::vector<FlameFrame> frames_;
  std::unordered_map<std::string, uint32_t> pseudo_ids_;
};

// A location no function describes is shown as its mapping, as perf shows "[libjvm.so]".
std::string UnknownFrameName(const Profile& profile, const Location& location) {
  std::string_view file = profile.mappings[location.mapping].file;
  if (file.empty()) return "[unknown]";
  if (file.front() == '[') return std::string(file);
  const size_t slash = file.rfind('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return "[" + std::string(file) + "]";
}

std::string ProcessFrameName(const Process& process) {
  return (process.command.empty() ? std::string("process") : process.command) + " [" + std::to_string(process.pid) +
         "]";
}

class TreeBuilder {
 public:
  TreeBuilder() { nodes_.push_back(BuildNode{0, 0, 0, 0, {}}); }

  uint32_t Child(uint32_t parent, uint32_t frame) {
    const uint64_t key = (uint64_t{parent} << 32) | frame;
    const auto [it, inserted] = children_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
    if (inserted) nodes_.push_back(BuildNode{frame, parent, nodes_[parent].depth + 1, 0, {}});
    return it->second;
  }
  void Count(uint32_t node, uint64_t samples, uint32_t line) {
    BuildNode& n = nodes_[node];
    n.total += samples;
    if (line == 0) return;
    for (FlameLine& l : n.lines) {
      if (l.line == line) {
        l.samples += samples;
        return;
      }
    }
    n.lines.push_back(FlameLine{line, samples});
  }
  std::vector<BuildNode>& nodes() { return nodes_; }

 private:
  std::vector<BuildNode> nodes_;
  std::unordered_map<uint64_t, uint32_t> children_;
};

void AddSamples(const Profile& profile, const FlameGraphOptions& options, FrameTable& frames, TreeBuilder& tree) {
  const bool process_level = options.process_level || profile.processes.size() > 1;
  for (const Sample& sample : profile.samples) {
    uint32_t node = 0;
    tree.Count(node, sample.count, 0);
    const Process* process = sample.process < profile.processes.size() ? &profile.processes[sample.process] : nullptr;
    if (process_level) {
      node = tree.Child(node, frames.Pseudo(process ? ProcessFrameName(*process) : "[unknown process]", "process"));
      tree.Count(node, sample.count, 0);
    }
    if (options.thread_level) {
      node = tree.Child(node, frames.Pseudo(sample.thread.empty() ? "[unknown thread]" : sample.thread, "thread"));
      tree.Count(node, sample.count, 0);
    }
    // Samples list locations leaf first and lines innermost first: walk both backwards.
    for (auto loc = sample.locations.rbegin(); loc != sample.locations.rend(); ++loc) {
      const Location& location = profile.locations[*loc];
      if (location.lines.empty()) {
        node = tree.Child(node, frames.Pseudo(UnknownFrameName(profile, location), "unknown"));
        tree.Count(node, sample.count, 0);
        continue;
      }
      for (auto line = location.lines.rbegin(); line != location.lines.rend(); ++line) {
        node = tree.Child(node, line->function);
        tree.Count(node, sample.count, line->line);
      }
    }
  }
}

// Ranks the frames the kept nodes use by (name, kind, file) and renumbers them densely.
std::vector<uint32_t> RankFrames(std::vector<FlameFrame>& all, const std::vector<BuildNode>& nodes,
                                 const std::vector<bool>& kept, std::vector<FlameFrame>& out) {
  std::vector<bool> used(all.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (kept[i]) used[nodes[i].frame] = true;
  }
  std::vector<uint32_t> order;
  for (uint32_t f = 0; f < all.size(); ++f) {
    if (used[f]) order.push_back(f);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const FlameFrame& x = all[a];
    const FlameFrame& y = all[b];
    if (const int c = x.name.compare(y.name); c != 0) return c < 0;
    if (const int c = std::string_view(x.kind).compare(y.kind); c != 0) return c < 0;
    return x.file < y.file;
  });
  std::vector<uint32_t> rank(all.size(), 0);
  out.reserve(order.size());
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    out.push_back(std::move(all[order[r]]));
  }
  return rank;
}

}  // namespace

FlameTree BuildFlameTree(const Profile& profile, const FlameGraphOptions& options) {
  FrameTable frames(profile);
  const uint32_t root_frame = frames.Pseudo("all", "root");
  TreeBuilder builder;
  builder.nodes()[0].frame = root_frame;
  AddSamples(profile, options, frames, builder);
  std::vector<BuildNode>& nodes = builder.nodes();

  // Nodes are created after their parents, so one forward pass sees a parent's verdict first.
  const double threshold = std::ceil(options.min_share * static_cast<double>(nodes[0].total));
  std::vector<bool> kept(nodes.size(), true);
  for (size_t i = 1; i < nodes.size(); ++i) {
    kept[i] = kept[nodes[i].parent] && static_cast<double>(nodes[i].total) >= threshold;
  }

  FlameTree tree;
  const std::vector<uint32_t> rank = RankFrames(frames.frames(), nodes, kept, tree.frames);

  // Children of each node, contiguous (counting sort by parent), then ordered by frame rank.
  std::vector<uint32_t> first(nodes.size() + 1, 0);
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (kept[i]) ++first[nodes[i].parent + 1];
  }
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<uint32_t> children(first.back());
  std::vector<uint32_t> fill(first.begin(), first.end() - 1);
  for (uint32_t i = 1; i < nodes.size(); ++i) {
    if (kept[i]) children[fill[nodes[i].parent]++] = i;
  }
  for (size_t p = 0; p < nodes.size(); ++p) {
    std::sort(children.begin() + first[p], children.begin() + first[p + 1],
              [&](uint32_t a, uint32_t b) { return rank[nodes[a].frame] < rank[nodes[b].frame]; });
  }

  // Preorder without recursion: stacks can be thousands of frames deep.
  std::vector<uint32_t> stack{0};
  tree.nodes.reserve(first.back() + 1);
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    BuildNode& n = nodes[i];
    std::sort(n.lines.begin(), n.lines.end(), [](const FlameLine& a, const FlameLine& b) {
      return a.samples != b.samples ? a.samples > b.samples : a.line < b.line;
    });
    tree.nodes.push_back(FlameNode{rank[n.frame], n.depth, n.total, std::move(n.lines)});
    for (uint32_t c = first[i + 1]; c > first[i]; --c) stack.push_back(children[c - 1]);
  }
  return tree;
}

}  // namespace jitdump::report
