#include "jitdump/report/flamegraph_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "jitdump/report/child_index.h"
#include "jitdump/report/sequence_sort.h"

namespace jitdump::report {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Nodes while building, in creation order (a parent before its children). Lines are kept in a
// shared pool as per-node linked lists: most nodes have one line, none needs an allocation.
// 24 bytes: a node's depth is counted in the preorder walk that writes the FlameTree.
struct BuildNode {
  uint32_t frame;
  uint32_t parent;
  uint32_t first_line = kNone;  // index into the line pool
  uint32_t first_child = kNone;  // kept by the TreeBuilder's ChildIndex
  uint64_t total = 0;
};

struct PooledLine {
  uint32_t line;
  uint32_t next;  // next line of the same node, or kNone
  uint64_t samples;
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

// The tree under construction, its children found by frame through a ChildIndex keyed by
// (parent, frame): millions of nodes, no allocation per node. AddSamples looks up only the frames
// where a sample's path leaves the one before it.
class TreeBuilder {
 public:
  TreeBuilder(uint32_t root_frame) : children_(NodeLinks{&nodes_}) { nodes_.push_back(BuildNode{root_frame, kNone}); }

  uint32_t Child(uint32_t parent, uint32_t frame) {
    bool added = false;
    const uint32_t node = children_.FindOrAdd(parent, frame, static_cast<uint32_t>(nodes_.size()), &added);
    if (added) nodes_.push_back(BuildNode{frame, parent});
    return node;
  }

  void Count(uint32_t node, uint64_t samples, uint32_t line) {
    BuildNode& n = nodes_[node];
    n.total += samples;
    if (line == 0) return;
    for (uint32_t l = n.first_line; l != kNone; l = lines_[l].next) {
      if (lines_[l].line == line) {
        lines_[l].samples += samples;
        return;
      }
    }
    lines_.push_back(PooledLine{line, n.first_line, samples});
    n.first_line = static_cast<uint32_t>(lines_.size() - 1);
  }

  std::vector<BuildNode>& nodes() { return nodes_; }
  const std::vector<PooledLine>& lines() const { return lines_; }
  void ReleaseIndex() { children_.Release(); }

 private:
  std::vector<BuildNode> nodes_;
  std::vector<PooledLine> lines_;
  struct NodeLinks {
    std::vector<BuildNode>* nodes;
    std::pair<uint32_t, uint32_t> Key(uint32_t n) const { return {(*nodes)[n].parent, (*nodes)[n].frame}; }
    uint32_t& FirstChild(uint32_t n) { return (*nodes)[n].first_child; }
  };
  ChildIndex<NodeLinks> children_;  // nodes by (parent, frame)
};

// The pseudo frames of processes, threads and unknown locations, made once each (a recording
// has a few of them and tens of thousands of distinct stacks that name them again).
class PseudoFrames {
 public:
  PseudoFrames(const Profile& profile, FrameTable& frames)
      : profile_(profile), frames_(frames), processes_(profile.processes.size() + 1, kNone),
        threads_(profile.threads.size(), kNone), unknown_(profile.locations.size(), kNone) {}

  uint32_t Process(uint32_t index) {
    const size_t slot = index < profile_.processes.size() ? index : profile_.processes.size();
    uint32_t& id = processes_[slot];
    if (id == kNone) {
      id = frames_.Pseudo(slot < profile_.processes.size() ? ProcessFrameName(profile_.processes[slot]) : "[unknown process]",
                          "process");
    }
    return id;
  }
  uint32_t Thread(uint32_t index) {
    uint32_t& id = threads_[index];
    if (id == kNone) {
      const std::string& thread = profile_.threads[index];
      id = frames_.Pseudo(thread.empty() ? "[unknown thread]" : thread, "thread");
    }
    return id;
  }
  uint32_t Unknown(uint32_t location) {
    uint32_t& id = unknown_[location];
    if (id == kNone) id = frames_.Pseudo(UnknownFrameName(profile_, profile_.locations[location]), "unknown");
    return id;
  }

 private:
  const Profile& profile_;
  FrameTable& frames_;
  std::vector<uint32_t> processes_;  // by process index; the last: no process
  std::vector<uint32_t> threads_;    // by thread index (Profile::threads: each name once)
  std::vector<uint32_t> unknown_;    // by location index
};

// Every location's frames, outermost first, in one array: location l's are
// lines[first[l], first[l + 1]), none for an unknown location. The samples' walk reads a
// location's frames from here, in a row, instead of through each location's own vector (a
// read somewhere else for each frame of each sample).
struct LocationLines {
  explicit LocationLines(const Profile& profile) {
    first.reserve(profile.locations.size() + 1);
    for (const Location& location : profile.locations) {
      first.push_back(static_cast<uint32_t>(lines.size()));
      lines.insert(lines.end(), location.lines.rbegin(), location.lines.rend());
    }
    first.push_back(static_cast<uint32_t>(lines.size()));
  }
  bool Unknown(uint32_t location) const { return first[location] == first[location + 1]; }
  std::span<const Line> Of(uint32_t location) const {
    return std::span<const Line>(lines.data() + first[location], first[location + 1] - first[location]);
  }

  std::vector<uint32_t> first;
  std::vector<Line> lines;
};

// Each sample's path below the root as tokens, root first: its process's and thread's pseudo
// frames when the graph has those levels, then its locations outermost first (a location stands
// for its whole inline chain, or for its unknown frame). Equal tokens give equal frames, so
// samples sorted by their tokens walk the tree in order: a sample shares the nodes of the
// sample before it up to their first different token.
//
// The tokens are kept, sample after sample, only when the samples must be sorted by them (no
// SamplesByPath order given, or a level of threads, which that order does not group by).
// Otherwise a sample's path is read from its own locations: a copy of every sample's tokens was
// 8.8 MB on the 34 MB bench recording, fresh memory the kernel zeroes for each report.
class SamplePaths {
 public:
  // A sample's tokens: kept ones, or its process's pseudo frame (when `levels` is 1) followed by
  // its locations outermost first.
  struct Path {
    const uint32_t* kept = nullptr;
    const std::vector<uint32_t>* locations = nullptr;  // leaf first, as Sample::locations
    uint32_t head = 0;
    uint32_t levels = 0;
    size_t size = 0;
    uint32_t operator[](size_t k) const {
      if (kept != nullptr) return kept[k];
      return k < levels ? head : (*locations)[locations->size() - 1 - (k - levels)];
    }
  };

  // How many tokens two paths of these samples share from the root.
  static size_t Shared(const Path& a, const Path& b) {
    const size_t most = a.size < b.size ? a.size : b.size;
    size_t n = 0;
    if (a.kept != nullptr) {
      while (n < most && a.kept[n] == b.kept[n]) ++n;
      return n;
    }
    if (most == 0 || (a.levels != 0 && a.head != b.head)) return 0;
    const uint32_t* x = a.locations->data() + a.locations->size();  // just past the outermost
    const uint32_t* y = b.locations->data() + b.locations->size();
    const size_t locations = most - a.levels;
    while (n < locations && x[-1 - static_cast<ptrdiff_t>(n)] == y[-1 - static_cast<ptrdiff_t>(n)]) ++n;
    return a.levels + n;
  }

  SamplePaths(const Profile& profile, const FlameGraphOptions& options, const LocationLines& lines,
              PseudoFrames& pseudo, bool keep)
      : profile_(profile), pseudo_(pseudo), keep_(keep) {
    process_level_ = options.process_level || profile.processes.size() > 1;
    levels_ = size_t{process_level_} + size_t{options.thread_level};
    // The pseudo frames are made in the order the samples name them, as frame ids break ties
    // between frames of one name, kind and file when they are ranked.
    if (!keep_) {
      bool any_unknown = false;
      for (uint32_t l = 0; l < profile.locations.size() && !any_unknown; ++l) any_unknown = lines.Unknown(l);
      for (const Sample& sample : profile.samples) {
        if (process_level_) pseudo.Process(sample.process);
        if (!any_unknown) continue;
        for (auto loc = sample.locations.rbegin(); loc != sample.locations.rend(); ++loc) {
          if (lines.Unknown(*loc)) pseudo.Unknown(*loc);
        }
      }
      return;
    }
    size_t total = 0;
    for (const Sample& sample : profile.samples) total += levels_ + sample.locations.size();
    tokens_.reserve(total);
    begin_.reserve(profile.samples.size() + 1);
    for (const Sample& sample : profile.samples) {
      begin_.push_back(static_cast<uint32_t>(tokens_.size()));
      if (process_level_) tokens_.push_back(pseudo.Process(sample.process));
      if (options.thread_level) tokens_.push_back(pseudo.Thread(sample.thread));
      for (auto loc = sample.locations.rbegin(); loc != sample.locations.rend(); ++loc) {
        if (lines.Unknown(*loc)) pseudo.Unknown(*loc);
        tokens_.push_back(*loc);
      }
    }
    begin_.push_back(static_cast<uint32_t>(tokens_.size()));
  }

  size_t levels() const { return levels_; }
  Path Of(uint32_t sample) const {
    Path path;
    if (keep_) {
      path.kept = tokens_.data() + begin_[sample];
      path.size = begin_[sample + 1] - begin_[sample];
      return path;
    }
    const Sample& s = profile_.samples[sample];
    path.locations = &s.locations;
    path.levels = static_cast<uint32_t>(levels_);
    if (process_level_) path.head = pseudo_.Process(s.process);
    path.size = levels_ + s.locations.size();
    return path;
  }
  // The samples in the order of their token sequences (the tokens kept).
  std::vector<uint32_t> Sorted() const {
    std::vector<uint32_t> order(begin_.size() - 1);
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortSequences(order.data(), order.data() + order.size(), 0, [this](uint32_t sample, size_t depth) {
      return depth < begin_[sample + 1] - begin_[sample] ? int64_t{tokens_[begin_[sample] + depth]} : int64_t{-1};
    });
    return order;
  }

 private:
  const Profile& profile_;
  PseudoFrames& pseudo_;
  bool keep_ = false;
  bool process_level_ = false;
  size_t levels_ = 0;
  std::vector<uint32_t> tokens_;  // when kept: every sample's tokens, sample after sample
  std::vector<uint32_t> begin_;   // sample i's tokens: tokens_[begin_[i], begin_[i + 1])
};

// Adds the samples in the order of their paths. The nodes of the path so far stay on a stack, so
// only the frames after the first token that differs from the previous sample's are looked up;
// and the samples are counted once per token of that walk, not once per frame of each sample:
// a token's samples are summed while the walk stays below it and added to its frames when the
// walk leaves it (then to the token above it).
// `by_path` (SamplesByPath), when given, is the order unless the graph has a level of threads,
// which it does not group by.
void AddSamples(const Profile& profile, const FlameGraphOptions& options, const std::vector<uint32_t>* by_path,
                FrameTable& frames, TreeBuilder& tree) {
  PseudoFrames pseudo(profile, frames);
  const LocationLines lines(profile);
  const bool sort_here = by_path == nullptr || options.thread_level;
  const SamplePaths paths(profile, options, lines, pseudo, /*keep=*/sort_here);
  std::vector<uint32_t> sorted_here;
  if (sort_here) by_path = &(sorted_here = paths.Sorted());
  struct Frame {
    uint32_t node;
    uint32_t line;
  };
  struct Token {
    uint32_t end;  // its frames are path[the previous token's end, end)
    uint64_t samples = 0;
  };
  std::vector<Frame> path;
  std::vector<Token> open;  // the tokens of the path so far
  uint64_t root = 0;
  // Leaves the last token of the path: its samples go to its frames and to the token above it.
  auto close = [&] {
    const Token token = open.back();
    open.pop_back();
    const uint32_t first = open.empty() ? 0 : open.back().end;
    for (uint32_t f = first; f < token.end; ++f) tree.Count(path[f].node, token.samples, path[f].line);
    path.resize(first);
    (open.empty() ? root : open.back().samples) += token.samples;
  };
  SamplePaths::Path previous;
  for (const uint32_t s : *by_path) {
    const Sample& sample = profile.samples[s];
    const SamplePaths::Path tokens = paths.Of(s);
    const size_t shared = SamplePaths::Shared(tokens, previous);
    while (open.size() > shared) close();
    for (size_t k = shared; k < tokens.size; ++k) {
      uint32_t node = path.empty() ? 0 : path.back().node;
      const uint32_t token = tokens[k];
      if (k < paths.levels()) {
        path.push_back(Frame{tree.Child(node, token), 0});
      } else if (lines.Unknown(token)) {
        path.push_back(Frame{tree.Child(node, pseudo.Unknown(token)), 0});
      } else {
        for (const Line& line : lines.Of(token)) {
          node = tree.Child(node, line.function);
          path.push_back(Frame{node, line.line});
        }
      }
      open.push_back(Token{static_cast<uint32_t>(path.size())});
    }
    (open.empty() ? root : open.back().samples) += sample.count;
    previous = tokens;
  }
  while (!open.empty()) close();
  tree.Count(0, root, 0);
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

// Appends node `n`'s pooled lines to `out`, most samples first.
void AppendLines(const TreeBuilder& builder, const BuildNode& n, std::vector<FlameLine>& out) {
  const size_t first = out.size();
  for (uint32_t l = n.first_line; l != kNone; l = builder.lines()[l].next) {
    out.push_back(FlameLine{builder.lines()[l].line, builder.lines()[l].samples});
  }
  if (out.size() - first < 2) return;
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), [](const FlameLine& a, const FlameLine& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.line < b.line;
  });
}

}  // namespace

FlameTree BuildFlameTree(const Profile& profile, const FlameGraphOptions& options, const std::vector<uint32_t>* by_path) {
  FrameTable frames(profile);
  TreeBuilder builder(frames.Pseudo("all", "root"));
  AddSamples(profile, options, by_path, frames, builder);
  builder.ReleaseIndex();
  const std::vector<BuildNode>& nodes = builder.nodes();

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
  std::vector<uint32_t>().swap(fill);
  for (size_t p = 0; p < nodes.size(); ++p) {
    if (first[p + 1] - first[p] < 2) continue;  // most nodes: one child or none
    std::sort(children.begin() + first[p], children.begin() + first[p + 1],
              [&](uint32_t a, uint32_t b) { return rank[nodes[a].frame] < rank[nodes[b].frame]; });
  }

  // Preorder without recursion: stacks can be thousands of frames deep.
  struct Visit {
    uint32_t node;
    uint32_t depth;
  };
  std::vector<Visit> stack{Visit{0, 0}};
  tree.nodes.reserve(first.back() + 1);
  while (!stack.empty()) {
    const auto [i, depth] = stack.back();
    stack.pop_back();
    const BuildNode& n = nodes[i];
    const uint32_t first_line = static_cast<uint32_t>(tree.lines.size());
    AppendLines(builder, n, tree.lines);
    tree.nodes.push_back(FlameNode{rank[n.frame], depth, n.total, first_line,
                                   static_cast<uint32_t>(tree.lines.size() - first_line)});
    for (uint32_t c = first[i + 1]; c > first[i]; --c) stack.push_back(Visit{children[c - 1], depth + 1});
  }
  return tree;
}

}  // namespace jitdump::report
