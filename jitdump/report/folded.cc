#include "jitdump/report/folded.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jitdump/report/child_index.h"
#include "jitdump/report/sample_order.h"

namespace jitdump::report {
namespace {

void AppendName(std::string& stack, std::string_view name) {
  for (char c : name) stack.push_back(c == ';' ? ',' : (c == '\n' || c == '\r') ? ' ' : c);
}

const char* Suffix(FrameKind kind) {
  switch (kind) {
    case FrameKind::kCompiled: return "_[j]";
    case FrameKind::kInlined: return "_[i]";
    case FrameKind::kInterpreted: return "_[0]";
    case FrameKind::kKernel: return "_[k]";
    default: return "";
  }
}

// The folded stacks as a tree of text segments, merged by text: segment 0 is the thread's name,
// each further segment ";" + a function's name (and suffix). Each segment is a token whose number
// orders it (see RankTokens), and a node of the tree is a distinct sequence of tokens, a distinct
// prefix of the folded texts, so equal texts meet in one node without their text being built. The
// tree is grown from the samples in the order of their paths (SamplesByPath, shared with the flame
// graph and pprof): a sample shares the nodes of its thread's sample before it up to the first
// location that differs, and only the locations after it are looked up, where hashing every
// sample's whole stack of tokens took a step per frame (2.35 M on the 37.5 MB reference
// recording). A walk of the tree in token order then gives the texts in byte order, each built
// from the one before it.
class Folder {
 public:
  Folder(const Profile& profile, const FoldedOptions& options, const std::vector<uint32_t>& by_path)
      : children_(NodeLinks{&nodes_}) {
    texts_.reserve(profile.functions.size());
    for (const Function& f : profile.functions) {
      std::string text = ";";
      AppendName(text, f.name);
      if (options.annotate) text += Suffix(f.kind);
      texts_.push_back(std::move(text));
    }
    // Each thread's text, made in the order the samples first name the thread.
    std::vector<uint32_t> thread_of(profile.samples.size());
    std::vector<uint32_t> text_of_thread(profile.threads.size(), kNone);
    for (size_t i = 0; i < profile.samples.size(); ++i) {
      uint32_t& text = text_of_thread[profile.samples[i].thread];
      if (text == kNone) {
        const std::string& name = profile.threads[profile.samples[i].thread];
        text = static_cast<uint32_t>(texts_.size());
        std::string thread;
        AppendName(thread, name.empty() ? std::string_view("[unknown]") : std::string_view(name));
        texts_.push_back(std::move(thread));
      }
      thread_of[i] = text;
    }
    RankTokens();
    TokensOfLocations(profile);
    for (uint32_t& text : thread_of) text = mid_[text];
    AddSamples(profile, thread_of, by_path);
  }

  // Calls emit(text, count) for each distinct stack, in the byte order of the texts: a preorder
  // walk of the tree whose siblings come in token order. A node's own line comes at the rank of
  // its text as the last segment, its subtree at the rank of its text followed by ';' (other
  // siblings' texts can fall between the two: "a;b" < "a;b(int)..." < "a;b;c").
  template <typename Emit>
  void ForEachText(Emit emit) const {
    // Each node's items: a line where the node's stack ends, a subtree below it. Grouped by
    // parent (counting sort), then ordered by rank within each group.
    struct Item {
      uint32_t rank;
      uint32_t node;
      bool line;
    };
    std::vector<uint32_t> first(nodes_.size() + 1, 0);
    for (size_t n = 1; n < nodes_.size(); ++n) {
      first[nodes_[n].parent + 1] += uint32_t{nodes_[n].count != 0} + uint32_t{nodes_[n].first_child != kNone};
    }
    for (size_t n = 0; n < nodes_.size(); ++n) first[n + 1] += first[n];
    std::vector<Item> items(first.back());
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (uint32_t n = 1; n < nodes_.size(); ++n) {
      const Node& node = nodes_[n];
      if (node.count != 0) items[fill[node.parent]++] = Item{last_[node.token], n, true};
      if (node.first_child != kNone) items[fill[node.parent]++] = Item{node.token, n, false};
    }
    std::vector<uint32_t>().swap(fill);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (first[n + 1] - first[n] < 2) continue;  // most nodes: one item or none
      std::sort(items.begin() + first[n], items.begin() + first[n + 1],
                [](const Item& a, const Item& b) { return a.rank < b.rank; });
    }
    std::string text;
    std::vector<size_t> ends{0};  // ends[d]: where the text of the path's node at depth d ends
    std::vector<uint32_t> stack;  // items still to visit, the next one last (no recursion: stacks are deep)
    for (uint32_t k = first[1]; k > first[0]; --k) stack.push_back(k - 1);
    while (!stack.empty()) {
      const Item& item = items[stack.back()];
      stack.pop_back();
      const Node& node = nodes_[item.node];
      text.resize(ends[node.depth - 1]);
      text.append(text_of_[node.token]);
      ends.resize(node.depth);
      ends.push_back(text.size());
      if (item.line) {
        emit(std::string_view(text), node.count);
      } else {
        for (uint32_t k = first[item.node + 1]; k > first[item.node]; --k) stack.push_back(k - 1);
      }
    }
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Node {
    uint32_t parent;
    uint32_t token;        // its text's mid token (see RankTokens)
    uint32_t depth;        // 0 for the root; 1 for a thread
    uint32_t first_child;  // kNone for none (kept by children_)
    uint64_t count;        // samples whose stack ends here
  };

  // Adds every sample, in the order of their paths (process, locations root first; see
  // SamplesByPath). The samples of one thread keep that order among themselves, so each sample
  // shares the nodes of its thread's sample before it up to the first location that differs.
  void AddSamples(const Profile& profile, const std::vector<uint32_t>& thread_token, const std::vector<uint32_t>& by_path) {
    nodes_.push_back(Node{kNone, 0, 0, kNone, 0});
    const std::vector<Sample>& samples = profile.samples;
    struct ThreadWalk {
      uint32_t previous = kNone;  // the thread's sample before
      std::vector<uint32_t> path;  // path[d]: its node after its location d (root first); path[0]: the thread's
    };
    std::unordered_map<uint32_t, ThreadWalk> walks;  // by thread token: a recording has tens of threads
    ThreadWalk* walk = nullptr;
    uint32_t walk_token = kNone;
    for (const uint32_t s : by_path) {
      if (thread_token[s] != walk_token) {
        walk_token = thread_token[s];
        walk = &walks[walk_token];
      }
      std::vector<uint32_t>& path = walk->path;
      const std::vector<uint32_t>& locations = samples[s].locations;
      size_t shared = 1;  // the thread's node
      if (walk->previous == kNone) {
        path.assign(1, Child(0, walk_token));
      } else {
        const std::vector<uint32_t>& before = samples[walk->previous].locations;
        while (shared <= locations.size() && shared <= before.size() &&
               locations[locations.size() - shared] == before[before.size() - shared]) {
          ++shared;
        }
        path.resize(shared);
      }
      for (size_t depth = shared; depth <= locations.size(); ++depth) {
        uint32_t node = path.back();
        // An unknown location (no lines) has no segment: its node is its caller's.
        const uint32_t location = locations[locations.size() - depth];
        for (uint32_t k = location_tokens_[location]; k < location_tokens_[location + 1]; ++k) {
          node = Child(node, location_tokens_[k]);
        }
        path.push_back(node);
      }
      nodes_[path.back()].count += samples[s].count;
      walk->previous = s;
    }
    children_.Release();
  }

  // The child of `parent` with `token`, made when it is new.
  uint32_t Child(uint32_t parent, uint32_t token) {
    bool added = false;
    const uint32_t node = children_.FindOrAdd(parent, token, static_cast<uint32_t>(nodes_.size()), &added);
    if (added) nodes_.push_back(Node{parent, token, nodes_[parent].depth + 1, kNone, 0});
    return node;
  }

  // Tokens: every segment text t is ranked twice in one order, as t + ";" (a segment that more
  // segments follow: the next one begins with ';') and as t alone (the last one). Comparing two
  // stacks token by token then gives the order of their texts byte by byte: at the first tokens
  // that differ, either the texts differ within the shorter one (the ranks order them), or one is
  // a prefix of the other and what follows it (';' or the end of the line) is part of its token.
  // No name holds ';' (AppendName replaces it), so t + ";" never equals another segment's text.
  void RankTokens() {
    const uint32_t n = static_cast<uint32_t>(texts_.size());
    std::vector<std::string> keys;
    keys.reserve(2 * size_t{n});
    for (const std::string& t : texts_) keys.push_back(t + ';');
    for (const std::string& t : texts_) keys.push_back(t);
    std::vector<uint32_t> order(2 * size_t{n});
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
    std::vector<uint32_t> rank(order.size());  // rank[k]: distinct keys before order[k]
    for (size_t k = 1; k < order.size(); ++k) rank[k] = rank[k - 1] + (keys[order[k]] != keys[order[k - 1]]);
    mid_.assign(n, 0);
    text_of_.assign(order.size(), std::string_view());
    for (size_t k = 0; k < order.size(); ++k) {
      text_of_[rank[k]] = texts_[order[k] % n];  // equal keys are equal texts: any spells the token
      if (order[k] < n) mid_[order[k]] = rank[k];
    }
    // A node holds its text's mid token; a line that ends there ranks as last_[mid token].
    last_.assign(order.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) {
      if (order[k] >= n) last_[mid_[order[k] - n]] = rank[k];
    }
  }

  // Each location's mid tokens outermost first (its lines backwards), after the offsets of every
  // location's run in the same array: location l's tokens are
  // location_tokens_[location_tokens_[l], location_tokens_[l + 1]).
  void TokensOfLocations(const Profile& profile) {
    location_tokens_.resize(profile.locations.size() + 1);
    for (size_t l = 0; l < profile.locations.size(); ++l) {
      const Location& location = profile.locations[l];
      location_tokens_[l] = static_cast<uint32_t>(location_tokens_.size());
      for (size_t k = location.lines.size(); k-- > 0;) location_tokens_.push_back(mid_[location.lines[k].function]);
    }
    location_tokens_[profile.locations.size()] = static_cast<uint32_t>(location_tokens_.size());
  }

  std::vector<std::string> texts_;  // functions' segments, then threads'
  std::vector<uint32_t> mid_;       // text -> its token followed by more segments
  std::vector<uint32_t> last_;      // mid token -> the same text's token as the last segment
  std::vector<std::string_view> text_of_;  // token -> a text that spells it (in texts_)
  std::vector<uint32_t> location_tokens_;
  std::vector<Node> nodes_;  // nodes_[0]: the root (no text); a parent before its children
  struct NodeLinks {
    std::vector<Node>* nodes;
    std::pair<uint32_t, uint32_t> Key(uint32_t n) const { return {(*nodes)[n].parent, (*nodes)[n].token}; }
    uint32_t& FirstChild(uint32_t n) { return (*nodes)[n].first_child; }
  };
  ChildIndex<NodeLinks> children_;  // nodes by (parent, token)
};

}  // namespace

std::map<std::string, uint64_t> FoldStacks(const Profile& profile, const FoldedOptions& options) {
  std::map<std::string, uint64_t> stacks;
  Folder(profile, options, SamplesByPath(profile)).ForEachText([&](std::string_view text, uint64_t count) {
    stacks.emplace_hint(stacks.end(), text, count);
  });
  return stacks;
}

void WriteFolded(const Profile& profile, const FoldedOptions& options, std::ostream& out,
                 const std::vector<uint32_t>* by_path) {
  constexpr size_t kFlushBytes = 1 << 20;
  std::string buffer;
  buffer.reserve(kFlushBytes + 4096);
  std::vector<uint32_t> sorted_here;
  if (by_path == nullptr) by_path = &(sorted_here = SamplesByPath(profile));
  Folder(profile, options, *by_path).ForEachText([&](std::string_view text, uint64_t count) {
    char digits[24];
    digits[0] = ' ';
    char* end = std::to_chars(digits + 1, digits + sizeof digits - 1, count).ptr;
    *end++ = '\n';
    buffer.append(text);
    buffer.append(digits, static_cast<size_t>(end - digits));
    if (buffer.size() >= kFlushBytes) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  });
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace jitdump::report
