// ChildIndex: the trees' children by (parent, key). Each (parent, key) finds the node made for it
// first, every part of the key tells children apart, and every node is found again after the
// index grows or is released and used again.
#include "jitdump/report/child_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace jitdump::report {
namespace {

// A tree as the report's are: nodes numbered in the order made, node 0 the root.
struct Tree {
  struct Node {
    uint32_t parent;
    uint32_t key;
  };
  struct NodeKey {
    const std::vector<Node>* nodes;
    std::pair<uint32_t, uint32_t> operator()(uint32_t n) const { return {(*nodes)[n].parent, (*nodes)[n].key}; }
  };
  std::vector<Node> nodes{{UINT32_MAX, 0}};
  ChildIndex<NodeKey> children{NodeKey{&nodes}};

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

}  // namespace
}  // namespace jitdump::report
