// The children of a tree's nodes by (parent, key), for the trees the report grows from its
// samples (the folded stacks' tree of text tokens, the flame graph's tree of frames): hundreds of
// thousands of nodes, each looked up again by every sample that passes through it.
//
// A node's first child is linked from the node itself and found without the hash table: the
// trees are grown from samples in path order, so most nodes are made as the first child of the
// node made just before them (on the bench recording 155,000 of the folded tree's 199,000 nodes,
// 2,900 of them not right after their parent), and most lookups that find a node find a first
// child (125,000 of 184,000). Looking up a first child reads the parent, which the walk has just
// left, and the node next to it, where the hash table's probe was two cache misses in a row.
// The other children are filed in the table: open addressing over node indexes only, four bytes
// a slot, the (parent, key) a slot stands for read from the tree's own nodes, linear probing, a
// power-of-two capacity grown at half full. Not a FlatTable (flat_index.h), whose entries hold
// their keys: slots holding (parent, key) beside the node measured no faster on the bench
// recording and take three times the memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump::report {

// Nodes: the tree's nodes, seen through
//   std::pair<uint32_t, uint32_t> Key(uint32_t n) const: {parent, key} of node n, already made;
//   uint32_t& FirstChild(uint32_t n): node n's first child, a field of the node that the caller
//     makes kNone and this index keeps.
template <typename Nodes>
class ChildIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit ChildIndex(Nodes nodes) : nodes_(std::move(nodes)) {}

  // The child of `parent` with `key`; when it has none, `fresh` is recorded as that child and
  // returned, and the caller makes node `fresh` before the next call. Nodes are numbered from 0
  // in the order they are made; `fresh` is the next number (node 0, a root, is never a child).
  uint32_t FindOrAdd(uint32_t parent, uint32_t key, uint32_t fresh, bool* added) {
    uint32_t& first = nodes_.FirstChild(parent);
    if (first == kNone) {
      first = fresh;
      *added = true;
      return fresh;
    }
    if (nodes_.Key(first).second == key) {
      *added = false;
      return first;
    }
    if (2 * (size_t{filed_} + 1) > slots_.size()) Grow(fresh);
    for (size_t slot = Slot(parent, key);; slot = (slot + 1) & (slots_.size() - 1)) {
      const uint32_t node = slots_[slot];
      if (node == kNone) {
        slots_[slot] = fresh;
        ++filed_;
        *added = true;
        return fresh;
      }
      if (nodes_.Key(node) == std::pair<uint32_t, uint32_t>(parent, key)) {
        *added = false;
        return node;
      }
    }
  }

  // Frees the slots once the tree is grown (a later FindOrAdd files the nodes again).
  void Release() { std::vector<uint32_t>().swap(slots_); }

 private:
  static constexpr size_t kInitialSlots = 1024;

  size_t Slot(uint32_t parent, uint32_t key) const {
    const uint64_t mixed = (uint64_t{parent} << 32 | key) * 0x9e3779b97f4a7c15u;  // Fibonacci hashing
    return static_cast<size_t>(mixed >> 32) & (slots_.size() - 1);
  }

  // Doubles the slots (or makes them anew after Release) and files again the nodes among
  // 1 .. nodes - 1 that are not their parent's first child.
  void Grow(uint32_t nodes) {
    size_t size = slots_.empty() ? kInitialSlots : slots_.size() * 2;
    while (2 * (size_t{filed_} + 1) > size) size *= 2;
    slots_.assign(size, kNone);
    for (uint32_t n = 1; n < nodes; ++n) {
      const auto [parent, key] = nodes_.Key(n);
      if (nodes_.FirstChild(parent) == n) continue;
      size_t slot = Slot(parent, key);
      while (slots_[slot] != kNone) slot = (slot + 1) & (slots_.size() - 1);
      slots_[slot] = n;
    }
  }

  Nodes nodes_;
  std::vector<uint32_t> slots_;  // made at the first child that is not a first child
  uint32_t filed_ = 0;           // nodes in slots_ (or to file again after Release)
};

}  // namespace jitdump::report
