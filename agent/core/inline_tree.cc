// samply's inline record from PcDesc scope chains (inline_tree.h).
#include "agent/core/inline_tree.h"

#include <functional>

namespace jitdump_agent {
namespace {

constexpr std::string_view kUnknownFunction = "<unknown>";
constexpr std::string_view kUnknownFile = "";

uint32_t LineOf(const MethodLines* method, int64_t bci) {
  if (method == nullptr) return 0;
  const int32_t line = method->lines.LineAt(bci);
  return line > 0 ? static_cast<uint32_t>(line) : 0;
}

}  // namespace

void InlineTreeBuilder::Reset(size_t max_entries) {
  info_ = {};
  files_.clear();
  function_names_.clear();
  functions_.clear();
  calls_.clear();
  ranges_.clear();
  lines_.clear();
  file_ids_.Reset(max_entries);
  name_ids_.Reset(max_entries);
  function_ids_.Reset(max_entries);
  node_ids_.Reset(max_entries);
  function_methods_.clear();
  nodes_.clear();
  node_bcis_.clear();
  pending_ranges_.clear();
  node_range_begin_.clear();
  sorted_ranges_.clear();
  stack_.clear();
  root_first_child_ = kNoNode;
  root_last_child_ = kNoNode;
}

uint32_t InlineTreeBuilder::FileIndex(std::string_view file) {
  bool inserted = false;
  const uint32_t id = file_ids_.FindOrInsert(
      std::hash<std::string_view>{}(file), static_cast<uint32_t>(files_.size()),
      [&](uint32_t i) { return files_[i] == file; }, &inserted);
  if (inserted) files_.push_back(file);
  return id;
}

uint32_t InlineTreeBuilder::FunctionIndex(const MethodLines* method) {
  bool inserted = false;
  const uint32_t id = function_ids_.FindOrInsert(
      reinterpret_cast<uintptr_t>(method), static_cast<uint32_t>(functions_.size()),
      [&](uint32_t i) { return function_methods_[i] == method; }, &inserted);
  if (!inserted) return id;
  const std::string_view name = method != nullptr ? std::string_view(method->function) : kUnknownFunction;
  const std::string_view file = method != nullptr ? std::string_view(method->file) : kUnknownFile;
  const uint32_t name_index = name_ids_.FindOrInsert(
      std::hash<std::string_view>{}(name), static_cast<uint32_t>(function_names_.size()),
      [&](uint32_t i) { return function_names_[i] == name; }, &inserted);
  if (inserted) function_names_.push_back(name);
  jitdump::SamplyFunctionRecord record{};
  record.function_name_index = name_index;
  record.file_index = FileIndex(file);
  const int32_t first_line = method != nullptr ? method->lines.FirstLine() : 0;
  record.start_line = first_line > 0 ? static_cast<uint32_t>(first_line) : 0;
  record.start_column = 0;
  record.flags = 0;
  functions_.push_back(record);
  function_methods_.push_back(method);
  return id;
}

uint32_t InlineTreeBuilder::ChildNode(uint32_t parent, uint32_t function_index, int64_t caller_bci,
                                      uint32_t call_line) {
  const uint64_t hash = (uint64_t{parent} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{function_index} << 20) ^
                        static_cast<uint64_t>(caller_bci) * 0xC2B2AE3D27D4EB4Full;
  bool inserted = false;
  const uint32_t id = node_ids_.FindOrInsert(
      hash, static_cast<uint32_t>(nodes_.size()),
      [&](uint32_t i) {
        return nodes_[i].parent == parent && nodes_[i].function_index == function_index && node_bcis_[i] == caller_bci;
      },
      &inserted);
  if (!inserted) return id;
  nodes_.push_back(Node{parent, function_index, call_line, kNoNode, kNoNode, kNoNode, kNoNode, 0});
  node_bcis_.push_back(caller_bci);
  // Children stay in insertion order, which is the order of their first address.
  uint32_t& first = parent == kNoNode ? root_first_child_ : nodes_[parent].first_child;
  uint32_t& last = parent == kNoNode ? root_last_child_ : nodes_[parent].last_child;
  if (last == kNoNode) {
    first = id;
  } else {
    nodes_[last].next_sibling = id;
  }
  last = id;
  return id;
}

void InlineTreeBuilder::AddRange(uint32_t node, uint32_t start, uint32_t end) {
  Node& n = nodes_[node];
  // Sites arrive in ascending order, so a node's ranges do too: extend when adjacent.
  if (n.last_range != kNoNode && pending_ranges_[n.last_range].end == start) {
    pending_ranges_[n.last_range].end = end;
    return;
  }
  n.last_range = static_cast<uint32_t>(pending_ranges_.size());
  ++n.range_count;
  pending_ranges_.push_back({node, start, end});
}

void InlineTreeBuilder::EmitTree() {
  // Bucket the ranges per node (counting sort keeps each node's ascending order).
  node_range_begin_.assign(nodes_.size() + 1, 0);
  for (size_t i = 0; i < nodes_.size(); ++i) node_range_begin_[i + 1] = node_range_begin_[i] + nodes_[i].range_count;
  sorted_ranges_.resize(pending_ranges_.size());
  {
    // Reuse stack_ as the per-node fill cursor.
    stack_.assign(node_range_begin_.begin(), node_range_begin_.end() - 1);
    for (const PendingRange& r : pending_ranges_) sorted_ranges_[stack_[r.node]++] = {r.start, r.end - r.start};
    stack_.clear();
  }

  // Iterative pre-order DFS; the stack holds the next node to visit at each depth.
  calls_.reserve(nodes_.size());
  ranges_.reserve(sorted_ranges_.size());
  if (root_first_child_ == kNoNode) return;
  stack_.push_back(root_first_child_);
  while (!stack_.empty()) {
    const uint32_t id = stack_.back();
    if (id == kNoNode) {
      stack_.pop_back();
      continue;
    }
    const Node& n = nodes_[id];
    const uint32_t depth = static_cast<uint32_t>(stack_.size() - 1);
    calls_.push_back({depth, n.range_count, n.function_index, n.call_line, 0});
    ranges_.insert(ranges_.end(), sorted_ranges_.begin() + node_range_begin_[id],
                   sorted_ranges_.begin() + node_range_begin_[id + 1]);
    stack_.back() = n.next_sibling;
    if (n.first_child != kNoNode) stack_.push_back(n.first_child);
  }
}

const jitdump::InlineDebugInfo* InlineTreeBuilder::Build(uint64_t timestamp, uint64_t code_start,
                                                          uint64_t code_size, const MethodLines& root,
                                                          std::span<const PcSite> sites) {
  // Every function, file, name and node comes from one frame (or the root): bound the tables.
  size_t frame_count = 1;
  for (const PcSite& site : sites) frame_count += site.frames.size();
  Reset(frame_count);
  if (code_size == 0 || code_size > UINT32_MAX || code_start > UINT64_MAX - code_size) return nullptr;
  const uint64_t code_end = code_start + code_size;

  FunctionIndex(&root);  // the outer function is function 0
  nodes_.reserve(sites.size());
  pending_ranges_.reserve(sites.size());
  lines_.reserve(sites.size());

  uint64_t range_start = code_start;
  bool any = false;
  for (const PcSite& site : sites) {
    if (site.pc <= range_start || site.pc > code_end) continue;  // empty or outside this code
    const uint32_t start = static_cast<uint32_t>(range_start - code_start);
    const uint32_t end = static_cast<uint32_t>(site.pc - code_start);
    range_start = site.pc;
    any = true;

    // The inline chain, outer to inner: frames[n-2] called from frames[n-1] (the root), ...
    const std::span<const Frame> frames = site.frames;
    uint32_t parent = kNoNode;
    for (size_t k = frames.size(); k-- > 1;) {
      const Frame& caller = frames[k];
      const Frame& callee = frames[k - 1];
      const uint32_t function_index = FunctionIndex(callee.method);
      parent = ChildNode(parent, function_index, caller.bci, LineOf(caller.method, caller.bci));
      AddRange(parent, start, end);
    }

    // Line record: the innermost frame that has line information, as BuildLineRows does.
    const Frame* frame = nullptr;
    for (const Frame& f : frames) {
      if (f.method != nullptr && f.method->has_lines()) {
        frame = &f;
        break;
      }
    }
    if (frame != nullptr) {
      const uint32_t file_index = FileIndex(frame->method->file);
      const uint32_t line = LineOf(frame->method, frame->bci);
      const bool same = !lines_.empty() && lines_.back().file_index == file_index && lines_.back().line_number == line;
      if (!same) lines_.push_back({start, file_index, line, 0});
    }
  }
  if (!any) return nullptr;

  EmitTree();

  info_.timestamp = timestamp;
  info_.files = files_;
  info_.function_names = function_names_;
  info_.functions = functions_;
  info_.calls = calls_;
  info_.ranges = ranges_;
  info_.lines = lines_;
  return &info_;
}

}  // namespace jitdump_agent
