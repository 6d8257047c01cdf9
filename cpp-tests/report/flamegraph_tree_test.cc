// The flame graph's call tree: inline chains expanded root first, paths merged, children in
// name order, lines per node, process/thread levels, pruning.
#include "jitdump/report/flamegraph_tree.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpp-tests/report/test_profiles.h"
#include "jitdump/report/sample_order.h"

namespace jitdump::report {
namespace {

// "name@depth=total" per node in preorder: the whole shape in one comparable value.
std::vector<std::string> Shape(const FlameTree& tree) {
  std::vector<std::string> out;
  for (const FlameNode& n : tree.nodes) {
    out.push_back(tree.frames[n.frame].name + "@" + std::to_string(n.depth) + "=" + std::to_string(n.total));
  }
  return out;
}

const FlameNode* Find(const FlameTree& tree, const std::string& name, uint32_t depth) {
  for (const FlameNode& n : tree.nodes) {
    if (n.depth == depth && tree.frames[n.frame].name == name) return &n;
  }
  return nullptr;
}

TEST(FlameTreeTest, InlineChainsExpandRootFirstAndMerge) {
  const FlameTree tree = BuildFlameTree(testing::InlineDemoProfile(), FlameGraphOptions{});
  const std::vector<std::string> expected = {
      "all@0=1200",
      "start_thread@1=1200",
      "JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)@2=1180",
      "StubRoutines::call_stub@3=1180",
      "Interpreter@4=50",
      "demo.Inline.main(java.lang.String[])@4=1130",
      "demo.Inline.caller()@5=630",  // inlined into main: its own frame, above main
      "demo.Inline.leaf(int)@6=630",
      "asm_exc_page_fault@7=30",
      "clear_page_erms@8=30",
      "demo.Inline.checksum(long[])@5=200",
      "demo.Inline.mix(long)@6=200",
      "demo.Inline.digest(long[])@5=300",
      "demo.Inline.mix(long)@6=300",
      "[libjvm.so]@2=20",  // an address nothing names shows as its mapping
  };
  EXPECT_EQ(Shape(tree), expected);
}

TEST(FlameTreeTest, FramesCarryKindAndFile) {
  const FlameTree tree = BuildFlameTree(testing::InlineDemoProfile(), FlameGraphOptions{});
  const FlameNode* inlined = Find(tree, "demo.Inline.mix(long)", 6);
  ASSERT_NE(inlined, nullptr);
  // Two frames named mix: compiled on its own under checksum, inlined under digest.
  std::vector<std::string> kinds;
  for (const FlameNode& n : tree.nodes) {
    if (tree.frames[n.frame].name == "demo.Inline.mix(long)") kinds.push_back(tree.frames[n.frame].kind);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"compiled", "inlined"}));
  EXPECT_EQ(tree.frames[inlined->frame].file, "demo/Inline.java");
  EXPECT_STREQ(tree.frames[Find(tree, "Interpreter", 4)->frame].kind, "interpreted");
  EXPECT_STREQ(tree.frames[Find(tree, "StubRoutines::call_stub", 3)->frame].kind, "stub");
  EXPECT_STREQ(tree.frames[Find(tree, "clear_page_erms", 8)->frame].kind, "kernel");
  EXPECT_STREQ(tree.frames[Find(tree, "start_thread", 1)->frame].kind, "native");
  EXPECT_STREQ(tree.frames[Find(tree, "all", 0)->frame].kind, "root");
  EXPECT_STREQ(tree.frames[Find(tree, "[libjvm.so]", 2)->frame].kind, "unknown");
}

// "line:samples" per line of a node, in the tree's order.
std::vector<std::string> LinesOf(const FlameTree& tree, const FlameNode* node) {
  std::vector<std::string> out;
  for (uint32_t l = 0; node && l < node->line_count; ++l) {
    const FlameLine& line = tree.lines[node->first_line + l];
    out.push_back(std::to_string(line.line) + ":" + std::to_string(line.samples));
  }
  return out;
}

TEST(FlameTreeTest, LinesPerNodeMostSamplesFirst) {
  const FlameTree tree = BuildFlameTree(testing::InlineDemoProfile(), FlameGraphOptions{});
  EXPECT_EQ(LinesOf(tree, Find(tree, "demo.Inline.leaf(int)", 6)), (std::vector<std::string>{"12:600", "14:30"}));
  // main's samples are at its call sites: 31 (caller, inlined), 33 (digest), 35 (checksum).
  EXPECT_EQ(LinesOf(tree, Find(tree, "demo.Inline.main(java.lang.String[])", 4)),
            (std::vector<std::string>{"31:630", "33:300", "35:200"}));
  EXPECT_EQ(LinesOf(tree, Find(tree, "demo.Inline.digest(long[])", 5)), (std::vector<std::string>{"52:300"}));
  // Line 0 (unknown) is never listed.
  EXPECT_TRUE(LinesOf(tree, Find(tree, "StubRoutines::call_stub", 3)).empty());
  // Every node's lines are its own slice of the flat array, in preorder.
  uint32_t next = 0;
  for (const FlameNode& n : tree.nodes) {
    EXPECT_EQ(n.first_line, next);
    next += n.line_count;
  }
  EXPECT_EQ(next, tree.lines.size());
}

// The tree is built from the samples in the order of their paths: a stack that is a prefix of
// another's, and different locations (addresses, lines, inline chains) of one function under one
// parent, still make one node per distinct path, each sample counted once on every frame.
TEST(FlameTreeTest, PathsThatShareFramesAcrossLocationsMerge) {
  ProfileBuilder builder;
  const uint32_t a = builder.AddFunction("a", "A.java", FrameKind::kCompiled);
  const uint32_t b = builder.AddFunction("b", "B.java", FrameKind::kCompiled);
  const uint32_t c = builder.AddFunction("c", "C.java", FrameKind::kInlined);
  const uint32_t process = builder.AddProcess(1, "java", "");
  const uint32_t a1 = builder.AddLocation(0x10, 0, {Line{a, 1}});
  const uint32_t a2 = builder.AddLocation(0x20, 0, {Line{a, 2}});
  const uint32_t b5 = builder.AddLocation(0x30, 0, {Line{b, 5}});
  const uint32_t c_in_b = builder.AddLocation(0x40, 0, {Line{c, 7}, Line{b, 6}});
  builder.AddSample({b5, a1}, process, "t1", 2, 0);
  builder.AddSample({a1}, process, "t1", 3, 0);  // a prefix of the stack above
  builder.AddSample({c_in_b, a2}, process, "t2", 4, 0);
  builder.AddSample({b5, a2}, process, "t1", 1, 0);
  builder.AddSample({b5, a1}, process, "t2", 5, 0);  // the first stack again, another thread
  const FlameTree tree = BuildFlameTree(builder.Take(), FlameGraphOptions{});
  EXPECT_EQ(Shape(tree), (std::vector<std::string>{"all@0=15", "a@1=15", "b@2=12", "c@3=4"}));
  EXPECT_EQ(LinesOf(tree, Find(tree, "a", 1)), (std::vector<std::string>{"1:10", "2:5"}));
  EXPECT_EQ(LinesOf(tree, Find(tree, "b", 2)), (std::vector<std::string>{"5:8", "6:4"}));
  EXPECT_EQ(LinesOf(tree, Find(tree, "c", 3)), (std::vector<std::string>{"7:4"}));
}

TEST(FlameTreeTest, FramesAreSortedByNameSoIndexIsRank) {
  const FlameTree tree = BuildFlameTree(testing::InlineDemoProfile(), FlameGraphOptions{});
  for (size_t i = 1; i < tree.frames.size(); ++i) EXPECT_LE(tree.frames[i - 1].name, tree.frames[i].name);
  // Only frames some node uses are kept.
  std::vector<bool> used(tree.frames.size());
  for (const FlameNode& n : tree.nodes) used[n.frame] = true;
  for (size_t i = 0; i < used.size(); ++i) EXPECT_TRUE(used[i]) << tree.frames[i].name;
}

Profile TwoProcesses() {
  ProfileBuilder b;
  const uint32_t f = b.AddFunction("work", "", FrameKind::kNative);
  const uint32_t loc = b.AddLocation(0x10, 0, {{f, 0}});
  const uint32_t a = b.AddProcess(10, "java", "");
  const uint32_t c = b.AddProcess(20, "java", "");
  b.AddSample({loc}, a, "t1", 3, 0);
  b.AddSample({loc}, a, "t2", 1, 0);
  b.AddSample({loc}, c, "t1", 2, 0);
  return b.Take();
}

TEST(FlameTreeTest, SeveralProcessesGetAProcessLevel) {
  const FlameTree tree = BuildFlameTree(TwoProcesses(), FlameGraphOptions{});
  EXPECT_EQ(Shape(tree), (std::vector<std::string>{"all@0=6", "java [10]@1=4", "work@2=4", "java [20]@1=2",
                                                   "work@2=2"}));
}

TEST(FlameTreeTest, ThreadLevelOnRequest) {
  FlameGraphOptions options;
  options.thread_level = true;
  const FlameTree tree = BuildFlameTree(TwoProcesses(), options);
  EXPECT_EQ(Shape(tree), (std::vector<std::string>{"all@0=6", "java [10]@1=4", "t1@2=3", "work@3=3", "t2@2=1",
                                                   "work@3=1", "java [20]@1=2", "t1@2=2", "work@3=2"}));
  EXPECT_STREQ(tree.frames[tree.nodes[2].frame].kind, "thread");
  EXPECT_STREQ(tree.frames[tree.nodes[1].frame].kind, "process");
}

// Everything a tree holds, frames and lines included, in one comparable value.
std::vector<std::string> Whole(const FlameTree& tree) {
  std::vector<std::string> out;
  for (const FlameFrame& f : tree.frames) out.push_back(f.name + "|" + f.kind + "|" + f.file);
  for (const FlameNode& n : tree.nodes) {
    std::string node = std::to_string(n.frame) + "@" + std::to_string(n.depth) + "=" + std::to_string(n.total);
    for (const std::string& line : LinesOf(tree, &n)) node += " " + line;
    out.push_back(node);
  }
  return out;
}

// Given SamplesByPath's order, the tree reads each sample's path from its own locations instead
// of a copy of every sample's tokens that it sorts itself: the same tree either way, with a level
// of processes (two processes, or asked for) and with locations nothing names (pseudo frames).
TEST(FlameTreeTest, SamplesByPathGiveTheTreeItsOwnSortGives) {
  ProfileBuilder b;
  const uint32_t f = b.AddFunction("work", "W.java", FrameKind::kCompiled);
  const uint32_t g = b.AddFunction("inner", "W.java", FrameKind::kInlined);
  const uint32_t map = b.AddMapping("/usr/lib/libx.so", 0x1000, 0x2000, 0);
  const uint32_t work = b.AddLocation(0x10, 0, {{f, 3}});
  const uint32_t inlined = b.AddLocation(0x20, 0, {{g, 9}, {f, 4}});
  const uint32_t unknown = b.AddUnnamedLocation(0x1100, map);
  const uint32_t other_unknown = b.AddUnnamedLocation(0x1200, 0);
  const uint32_t p1 = b.AddProcess(10, "java", "");
  const uint32_t p2 = b.AddProcess(20, "java", "");
  b.AddSample({inlined, work}, p2, "t1", 2, 0);
  b.AddSample({unknown, work}, p1, "t1", 3, 0);
  b.AddSample({work}, p1, "t2", 1, 0);
  b.AddSample({other_unknown, unknown, work}, p1, "t1", 4, 0);
  b.AddSample({inlined, work}, p1, "t3", 5, 0);
  b.AddSample({other_unknown}, p2, "t1", 6, 0);
  const Profile profiles[] = {b.Take(), TwoProcesses(), testing::InlineDemoProfile()};
  for (const Profile& profile : profiles) {
    const std::vector<uint32_t> by_path = SamplesByPath(profile);
    for (const bool process_level : {false, true}) {
      FlameGraphOptions options;
      options.process_level = process_level;
      EXPECT_EQ(Whole(BuildFlameTree(profile, options, &by_path)), Whole(BuildFlameTree(profile, options)))
          << profile.samples.size() << " samples, process level asked: " << process_level;
    }
  }
}

TEST(FlameTreeTest, OneProcessHasNoProcessLevelUnlessAsked) {
  FlameGraphOptions options;
  EXPECT_EQ(Find(BuildFlameTree(testing::InlineDemoProfile(), options), "java [4242]", 1), nullptr);
  options.process_level = true;
  EXPECT_NE(Find(BuildFlameTree(testing::InlineDemoProfile(), options), "java [4242]", 1), nullptr);
}

TEST(FlameTreeTest, MinShareDropsNarrowFramesAndTheirSubtrees) {
  FlameGraphOptions options;
  options.min_share = 0.05;  // 60 of 1200 samples
  const FlameTree tree = BuildFlameTree(testing::InlineDemoProfile(), options);
  EXPECT_EQ(Find(tree, "Interpreter", 4), nullptr);         // 50
  EXPECT_EQ(Find(tree, "asm_exc_page_fault", 7), nullptr);  // 30
  EXPECT_EQ(Find(tree, "clear_page_erms", 8), nullptr);     // 30, under a dropped frame
  EXPECT_EQ(Find(tree, "[libjvm.so]", 2), nullptr);         // 20
  ASSERT_NE(Find(tree, "demo.Inline.checksum(long[])", 5), nullptr);  // 200
  // A parent keeps its full width: the dropped samples stay counted in it.
  EXPECT_EQ(Find(tree, "StubRoutines::call_stub", 3)->total, 1180u);
}

TEST(FlameTreeTest, EmptyProfileIsJustTheRoot) {
  const FlameTree tree = BuildFlameTree(Profile{}, FlameGraphOptions{});
  EXPECT_EQ(Shape(tree), (std::vector<std::string>{"all@0=0"}));
}

// Preorder invariant the page relies on: depth rises by at most one from node to node, and a
// node's total is at least the sum of its children's.
TEST(FlameTreeTest, SyntheticTreeIsAConsistentPreorder) {
  const FlameTree tree = BuildFlameTree(testing::SyntheticProfile(20000, 7), FlameGraphOptions{});
  ASSERT_FALSE(tree.nodes.empty());
  EXPECT_EQ(tree.nodes[0].total, 20000u);
  std::vector<uint64_t> children_sum(tree.nodes.size());
  std::vector<size_t> path;
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const FlameNode& n = tree.nodes[i];
    if (i > 0) {
      ASSERT_LE(n.depth, tree.nodes[i - 1].depth + 1) << i;
    }
    path.resize(n.depth);
    if (n.depth > 0) children_sum[path.back()] += n.total;
    path.push_back(i);
  }
  for (size_t i = 0; i < tree.nodes.size(); ++i) EXPECT_LE(children_sum[i], tree.nodes[i].total) << i;
}

}  // namespace
}  // namespace jitdump::report
