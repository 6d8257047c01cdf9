// The children of a tree's nodes by (parent, key), for the trees the report grows from its
// samples (the folded stacks' tree of text tokens, the flame graph's tree of frames): hundreds of
// thousands of nodes, each looked up again by every sample that passes through it.
//
// Open addressing over node indexes only, four bytes a slot: the (parent, key) a slot stands for
// is read from the tree's own nodes (`KeyOf`), so the index adds no copy of them and no
// allocation per node. Linear probing, a power-of-two capacity grown at half full. Not a
// FlatTable (flat_index.h), whose entries hold their keys: slots holding (parent, key) beside the
// node measured no faster on the bench recording and take three times the memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump::report {

// KeyOf: node index -> std::pair<uint32_t, uint32_t>{parent, key} of a node already made.
template <typename KeyOf>
class ChildIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit ChildIndex(KeyOf key_of) : key_of_(std::move(key_of)), slots_(kInitialSlots, kNone) {}

  // The child of `parent` with `key`; when it has none, `fresh` is recorded as that child and
  // returned, and the caller makes node `fresh` before the next call. Nodes are numbered from 0
  // in the order they are made; `fresh` is the next number (node 0, a root, is never a child).
  uint32_t FindOrAdd(uint32_t parent, uint32_t key, uint32_t fresh, bool* added) {
    if (2 * (size_t{fresh} + 1) > slots_.size()) Grow(fresh);
    for (size_t slot = Slot(parent, key);; slot = (slot + 1) & (slots_.size() - 1)) {
      const uint32_t node = slots_[slot];
      if (node == kNone) {
        slots_[slot] = fresh;
        *added = true;
        return fresh;
      }
      if (key_of_(node) == std::pair<uint32_t, uint32_t>(parent, key)) {
        *added = false;
        return node;
      }
    }
  }

  // Frees the slots once the tree is grown (a later FindOrAdd files every node again).
  void Release() { std::vector<uint32_t>().swap(slots_); }

 private:
  static constexpr size_t kInitialSlots = 1024;

  size_t Slot(uint32_t parent, uint32_t key) const {
    const uint64_t mixed = (uint64_t{parent} << 32 | key) * 0x9e3779b97f4a7c15u;  // Fibonacci hashing
    return static_cast<size_t>(mixed >> 32) & (slots_.size() - 1);
  }

  // Doubles the slots (or makes them anew after Release) and files nodes 1 .. nodes - 1 again.
  void Grow(uint32_t nodes) {
    size_t size = slots_.empty() ? kInitialSlots : slots_.size() * 2;
    while (2 * (size_t{nodes} + 1) > size) size *= 2;
    slots_.assign(size, kNone);
    for (uint32_t n = 1; n < nodes; ++n) {
      const auto [parent, key] = key_of_(n);
      size_t slot = Slot(parent, key);
      while (slots_[slot] != kNone) slot = (slot + 1) & (slots_.size() - 1);
      slots_[slot] = n;
    }
  }

  KeyOf key_of_;
  std::vector<uint32_t> slots_;
};

}  // namespace jitdump::report
