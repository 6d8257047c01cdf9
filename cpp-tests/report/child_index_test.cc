// ChildIndex: the trees' children by (parent, key). Each (parent, key) finds the node made for it
// first, every part of the key tells children apart, every node is found again after the index
// grows or is released and used again, and each node's first-child link names the first child
// made under it (the folded stacks' tree reads it as "has children").
#include "jitdump/report/child_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace jitdump::report {
namespace {

// A tree as the report's are: nodes numbered in the order made, node 0 the root.
struct Tree {
  struct Node {
    uint32_t parent;
    uint32_t key;
    uint32_t first_child = UINT32_MAX;
  };
  struct NodeLinks {
    std::vector<Node>* nodes;
    std::pair<uint32_t, uint32_t> Key(uint32_t n) const { return {(*nodes)[n].parent, (*nodes)[n].key}; }
    uint32_t& FirstChild(uint32_t n) { return (*nodes)[n].first_child; }
  };
  std::vector<Node> nodes{{UINT32_MAX, 0}};
  ChildIndex<NodeLinks> children{NodeLinks{&nodes}};

  uint32_t Child(uint32_t parent, uint32_t key, bool* added) {
    const uint32_t node = children.FindOrAdd(parent, key, static_cast<uint32_t>(nodes.size()), added);
    if (*added) nodes.push_back(Node{parent, key});
    return node;
  }
};

TEST(ChildIndexTest, EachParentAndKeyHasOneChild) {
  Tree tree;
  bool added = false;
  const uint32_t a = tree.Child(0, 7, &added);
  EXPECT_TRUE(added);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(tree.Child(0, 7, &added), a);
  EXPECT_FALSE(added);
  const uint32_t b = tree.Child(0, 8, &added);  // another key under the same parent
  EXPECT_TRUE(added);
  const uint32_t c = tree.Child(a, 7, &added);  // the same key under another parent
  EXPECT_TRUE(added);
  EXPECT_EQ(std::vector<uint32_t>({a, b, c}), std::vector<uint32_t>({1, 2, 3}));
  EXPECT_EQ(tree.Child(a, 7, &added), c);
  EXPECT_FALSE(added);
}

TEST(ChildIndexTest, FindsEveryNodeAfterGrowingAndAfterRelease) {
  Tree tree;
  bool added = false;
  // A chain and a fan, 20,000 nodes: the index grows from 1,024 slots several times.
  uint32_t parent = 0;
  for (uint32_t key = 0; key < 10000; ++key) parent = tree.Child(parent, key % 3, &added);
  for (uint32_t key = 0; key < 10000; ++key) tree.Child(0, 100 + key, &added);
  ASSERT_EQ(tree.nodes.size(), 20001u);
  auto all_found = [&tree] {
    for (uint32_t n = 1; n < tree.nodes.size(); ++n) {
      bool again = true;
      if (tree.Child(tree.nodes[n].parent, tree.nodes[n].key, &again) != n || again) return false;
    }
    return true;
  };
  EXPECT_TRUE(all_found());
  tree.children.Release();
  EXPECT_TRUE(all_found());
  EXPECT_EQ(tree.nodes.size(), 20001u);
}

TEST(ChildIndexTest, EachNodeLinksItsFirstChild) {
  Tree tree;
  bool added = false;
  // Siblings made out of order with their subtrees, keys that collide in the first-child check
  // (the same key under other parents) and a parent whose first child is not next to it.
  const uint32_t a = tree.Child(0, 5, &added);
  const uint32_t a1 = tree.Child(a, 5, &added);
  const uint32_t b = tree.Child(0, 6, &added);
  const uint32_t a2 = tree.Child(a, 6, &added);
  const uint32_t b1 = tree.Child(b, 5, &added);
  tree.children.Release();
  const uint32_t a3 = tree.Child(a, 7, &added);
  EXPECT_TRUE(added);
  std::vector<uint32_t> first(tree.nodes.size(), UINT32_MAX);
  for (uint32_t n = static_cast<uint32_t>(tree.nodes.size()) - 1; n >= 1; --n) first[tree.nodes[n].parent] = n;
  for (uint32_t n = 0; n < tree.nodes.size(); ++n) EXPECT_EQ(tree.nodes[n].first_child, first[n]) << "node " << n;
  EXPECT_EQ(tree.nodes[a].first_child, a1);
  EXPECT_EQ(tree.nodes[b].first_child, b1);
  for (const auto& [parent, key, node] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{
           {0, 5, a}, {a, 5, a1}, {0, 6, b}, {a, 6, a2}, {b, 5, b1}, {a, 7, a3}}) {
    EXPECT_EQ(tree.Child(parent, key, &added), node);
    EXPECT_FALSE(added);
  }
  EXPECT_EQ(tree.nodes.size(), 7u);
}

}  // namespace
}  // namespace jitdump::report
