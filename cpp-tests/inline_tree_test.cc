// InlineTreeBuilder: HotSpot PcDesc scope chains -> samply's SAMPLY_JIT_CODE_DEBUG_INFO2.
#include "agent/core/inline_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "jitdump/write/encoder.h"
#include "jitdump/format/dump_format.h"
#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/problem.h"

// Comparison and printing for the record structs, found by ADL.
namespace jitdump {

bool operator==(const SamplyInlineCallRecord& a, const SamplyInlineCallRecord& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool operator==(const SamplyRangeRecord& a, const SamplyRangeRecord& b) {
  return a.start_offset == b.start_offset && a.size == b.size;
}
bool operator==(const SamplyLineRecord& a, const SamplyLineRecord& b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool operator==(const SamplyFunctionRecord& a, const SamplyFunctionRecord& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void PrintTo(const SamplyInlineCallRecord& c, std::ostream* os) {
  *os << "{depth " << c.depth << ", ranges " << c.range_count << ", fn " << c.function_index << ", line "
      << c.call_line_number << ", col " << c.call_column_number << "}";
}
void PrintTo(const SamplyRangeRecord& r, std::ostream* os) { *os << "{" << r.start_offset << "+" << r.size << "}"; }
void PrintTo(const SamplyLineRecord& l, std::ostream* os) {
  *os << "{off " << l.code_offset << ", file " << l.file_index << ", line " << l.line_number << "}";
}
void PrintTo(const SamplyFunctionRecord& f, std::ostream* os) {
  *os << "{name " << f.function_name_index << ", file " << f.file_index << ", line " << f.start_line << "}";
}

}  // namespace jitdump

namespace jitdump_agent {
namespace {

using jitdump::SamplyFunctionRecord;
using jitdump::SamplyInlineCallRecord;
using jitdump::SamplyLineRecord;
using jitdump::SamplyRangeRecord;

constexpr uint64_t kStart = 0x7f0000001000;

MethodLines Method(std::string function, std::string file, std::vector<LineNumber> lines) {
  MethodLines m;
  m.function = std::move(function);
  m.file = std::move(file);
  m.lines = LineTable(std::move(lines));
  return m;
}

// Owns the frame storage behind a list of PcSites.
class Sites {
 public:
  Sites& Add(uint64_t offset, std::vector<Frame> frames) {
    frames_.push_back(std::move(frames));
    pcs_.push_back(kStart + offset);
    return *this;
  }
  std::span<const PcSite> view() {
    sites_.clear();
    for (size_t i = 0; i < pcs_.size(); ++i) sites_.push_back({pcs_[i], frames_[i]});
    return sites_;
  }

 private:
  std::vector<std::vector<Frame>> frames_;
  std::vector<uint64_t> pcs_;
  std::vector<PcSite> sites_;
};

std::vector<std::string> Strings(std::span<const std::string_view> views) {
  return std::vector<std::string>(views.begin(), views.end());
}

std::string FunctionName(const jitdump::InlineDebugInfo& info, uint32_t function_index) {
  return std::string(info.function_names[info.functions[function_index].function_name_index]);
}

// The record read back as a consumer would: the inline stack (outer first, as function names)
// covering code offset `offset`, found by walking the DFS list with a depth stack.
std::vector<std::string> StackAt(const jitdump::InlineDebugInfo& info, uint32_t offset) {
  std::vector<std::string> stack{FunctionName(info, 0)};
  std::vector<bool> covering;  // per depth: does the current node at that depth cover offset
  size_t range = 0;
  for (const auto& call : info.calls) {
    covering.resize(call.depth);
    bool covers = false;
    for (uint32_t r = 0; r < call.range_count; ++r, ++range) {
      const auto& rr = info.ranges[range];
      covers |= offset >= rr.start_offset && offset < rr.start_offset + rr.size;
    }
    const bool parents_cover = std::all_of(covering.begin(), covering.end(), [](bool b) { return b; });
    covering.push_back(covers);
    if (covers && parents_cover) stack.push_back(FunctionName(info, call.function_index));
  }
  return stack;
}

template <typename T>
std::vector<T> Vec(std::span<const T> s) {
  return std::vector<T>(s.begin(), s.end());
}

// What jitdump's reader (samply's rules and `jitdump check`'s) says about the record, placed
// before a CODE_LOAD of `code_size` bytes in an otherwise empty dump: "" when it accepts it,
// else every problem, one per line. The builder never re-validates at run time; its tests do.
std::string ReaderProblems(const jitdump::InlineDebugInfo& info, uint64_t code_size) {
  std::vector<uint8_t> bytes(sizeof(jitdump::FileHeader));
  const jitdump::FileHeader header = jitdump::MakeFileHeader({});
  std::memcpy(bytes.data(), &header, sizeof header);
  jitdump::CodeLoad load;
  load.timestamp = info.timestamp;
  load.code_addr = load.vma = kStart;
  load.code_size = code_size;
  load.code_index = 1;
  load.name = "load";
  const size_t at = bytes.size();
  bytes.resize(at + jitdump::InlineDebugInfoSize(info) + jitdump::CodeLoadSize(load));
  jitdump::EncodeCodeLoad(load, jitdump::EncodeInlineDebugInfo(info, bytes.data() + at));
  std::string out;
  for (const jitdump::Problem& problem : jitdump::Check(jitdump::Parse(bytes))) {
    out += jitdump::FormatProblem(problem) + "\n";
  }
  return out;
}

// What the builder promises beyond those rules (inline_tree.h): every range non-empty, each
// call's ranges ascending without overlap, line records strictly ascending.
std::string BuilderPromiseBroken(const jitdump::InlineDebugInfo& info) {
  size_t range = 0;
  for (size_t i = 0; i < info.calls.size(); ++i) {
    uint64_t end = 0;
    for (uint32_t r = 0; r < info.calls[i].range_count && range < info.ranges.size(); ++r, ++range) {
      const auto& rr = info.ranges[range];
      if (rr.size == 0) return "call " + std::to_string(i) + ": empty range";
      if (r > 0 && rr.start_offset < end) return "call " + std::to_string(i) + ": ranges overlap or descend";
      end = uint64_t{rr.start_offset} + rr.size;
    }
  }
  for (size_t i = 1; i < info.lines.size(); ++i) {
    if (info.lines[i].code_offset <= info.lines[i - 1].code_offset) {
      return "line record " + std::to_string(i) + ": not strictly ascending";
    }
  }
  return {};
}

// "" when the record is what the builder must produce: accepted by the reader, and keeping the
// builder's own promises.
std::string Problems(const jitdump::InlineDebugInfo& info, uint64_t code_size) {
  const std::string reader = ReaderProblems(info, code_size);
  return reader.empty() ? BuilderPromiseBroken(info) : reader;
}

class InlineTreeTest : public ::testing::Test {
 protected:
  // a() in p/A.java lines 10-12, b() in p/A.java lines 20-21, c() in p/C.java lines 30-31.
  MethodLines a_ = Method("p.A.a", "p/A.java", {{10, 12}, {0, 10}, {5, 11}});  // unsorted, as JVMTI gives
  MethodLines b_ = Method("p.A.b", "p/A.java", {{0, 20}, {3, 21}});
  MethodLines c_ = Method("p.C.c", "p/C.java", {{0, 30}, {4, 31}});
  InlineTreeBuilder builder_;
};

TEST_F(InlineTreeTest, ChainABC) {
  Sites sites;
  sites.Add(0x10, {{&a_, 0}})                     // [0x00,0x10) a:10
      .Add(0x20, {{&b_, 0}, {&a_, 5}})            // [0x10,0x20) b:20, b called at a:11
      .Add(0x30, {{&c_, 4}, {&b_, 3}, {&a_, 5}})  // [0x20,0x30) c:31, c called at b:21
      .Add(0x40, {{&a_, 10}});                    // [0x30,0x40) a:12
  const auto* info = builder_.Build(77, kStart, 0x50, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->timestamp, 77u);
  EXPECT_EQ(Strings(info->files), (std::vector<std::string>{"p/A.java", "p/C.java"}));
  EXPECT_EQ(Strings(info->function_names), (std::vector<std::string>{"p.A.a", "p.A.b", "p.C.c"}));
  EXPECT_EQ(Vec(info->functions), (std::vector<SamplyFunctionRecord>{
                                      {0, 0, 10, 0, 0}, {1, 0, 20, 0, 0}, {2, 1, 30, 0, 0}}));
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{{0, 1, 1, 11, 0}, {1, 1, 2, 21, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x10, 0x20}, {0x20, 0x10}}));
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{
                                  {0x00, 0, 10, 0}, {0x10, 0, 20, 0}, {0x20, 1, 31, 0}, {0x30, 0, 12, 0}}));
  EXPECT_EQ(Problems(*info, 0x50), "");
  EXPECT_EQ(StackAt(*info, 0x05), (std::vector<std::string>{"p.A.a"}));
  EXPECT_EQ(StackAt(*info, 0x15), (std::vector<std::string>{"p.A.a", "p.A.b"}));
  EXPECT_EQ(StackAt(*info, 0x25), (std::vector<std::string>{"p.A.a", "p.A.b", "p.C.c"}));
  EXPECT_EQ(StackAt(*info, 0x35), (std::vector<std::string>{"p.A.a"}));
}

TEST_F(InlineTreeTest, MultiRangeAndSiblingCalls) {
  Sites sites;
  sites.Add(0x10, {{&b_, 0}, {&a_, 5}})   // b@a:11   [0x00,0x10)
      .Add(0x18, {{&b_, 3}, {&a_, 5}})    // same node, adjacent: merged
      .Add(0x20, {{&a_, 6}})              // a:11
      .Add(0x28, {{&b_, 3}, {&a_, 5}})    // same node again: second range
      .Add(0x30, {{&b_, 0}, {&a_, 10}})   // b called from a:12: a different node
      .Add(0x38, {{&c_, 0}, {&a_, 10}});  // c sibling under the root
  const auto* info = builder_.Build(0, kStart, 0x40, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{
                                  {0, 2, 1, 11, 0}, {0, 1, 1, 12, 0}, {0, 1, 2, 12, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x00, 0x18}, {0x20, 0x08}, {0x28, 0x08}, {0x30, 0x08}}));
  EXPECT_EQ(info->functions.size(), 3u);  // b counted once although called twice
  EXPECT_EQ(Problems(*info, 0x40), "");
  EXPECT_EQ(StackAt(*info, 0x1c), (std::vector<std::string>{"p.A.a"}));
  EXPECT_EQ(StackAt(*info, 0x22), (std::vector<std::string>{"p.A.a", "p.A.b"}));
}

TEST_F(InlineTreeTest, MultiRangeNestedNode) {
  // c inside b in two disjoint pieces; b itself covers one contiguous range.
  Sites sites;
  sites.Add(0x08, {{&c_, 0}, {&b_, 3}, {&a_, 5}})
      .Add(0x10, {{&b_, 4}, {&a_, 5}})
      .Add(0x18, {{&c_, 4}, {&b_, 3}, {&a_, 5}});
  const auto* info = builder_.Build(0, kStart, 0x20, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{{0, 1, 1, 11, 0}, {1, 2, 2, 21, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x00, 0x18}, {0x00, 0x08}, {0x10, 0x08}}));
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{
                                  {0x00, 1, 30, 0}, {0x08, 0, 21, 0}, {0x10, 1, 31, 0}}));
}

TEST_F(InlineTreeTest, NegativeBcis) {
  Sites sites;
  sites.Add(0x04, {{&a_, -1}})                      // entry: a's first line
      .Add(0x08, {{&b_, -1}, {&a_, 5}})             // b's entry (sync), called at a:11
      .Add(0x0c, {{&c_, -3}, {&b_, -2}, {&a_, -1}})  // unwind/after bci everywhere
      .Add(0x10, {{&a_, -5}});
  const auto* info = builder_.Build(0, kStart, 0x10, a_, sites.view());
  ASSERT_NE(info, nullptr);
  // b@a:11 and b@a(bci -1) are different call sites, so different nodes.
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{
                                  {0, 1, 1, 11, 0}, {0, 1, 1, 10, 0}, {1, 1, 2, 20, 0}}));
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{
                                  {0x00, 0, 10, 0}, {0x04, 0, 20, 0}, {0x08, 1, 30, 0}, {0x0c, 0, 10, 0}}));
  EXPECT_EQ(Problems(*info, 0x10), "");
}

TEST_F(InlineTreeTest, MethodsWithoutLinesAndNullFrames) {
  MethodLines lambda = Method("p.A.lambda$0", "", {});       // hidden class: no SourceFile, no table
  MethodLines nofile = Method("p.Gen.x", "", {{0, 3}});     // a table but no file: has_lines() false
  MethodLines notable = Method("p.D.d", "p/D.java", {});    // a file but no table
  Sites sites;
  sites.Add(0x10, {{&lambda, 2}, {&b_, 3}, {&a_, 5}})  // line falls back to b:21
      .Add(0x20, {{nullptr, 7}, {&a_, 10}})            // unknown method, called at a:12; line a:12
      .Add(0x30, {{&c_, 0}, {&notable, 4}, {&a_, 0}})  // c called from d, whose line is unknown (0)
      .Add(0x40, {{&nofile, 0}, {nullptr, 1}, {&a_, 0}})
      .Add(0x48, {{nullptr, 0}});                       // a chain whose root itself is unknown
  const auto* info = builder_.Build(0, kStart, 0x50, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Problems(*info, 0x50), "");
  EXPECT_EQ(FunctionName(*info, 0), "p.A.a");
  for (const auto& f : info->functions) {
    ASSERT_LT(f.file_index, info->files.size());
    ASSERT_LT(f.function_name_index, info->function_names.size());
  }
  for (const auto& c : info->calls) ASSERT_LT(c.function_index, info->functions.size());
  for (const auto& l : info->lines) ASSERT_LT(l.file_index, info->files.size());
  EXPECT_EQ(StackAt(*info, 0x05), (std::vector<std::string>{"p.A.a", "p.A.b", "p.A.lambda$0"}));
  EXPECT_EQ(StackAt(*info, 0x15), (std::vector<std::string>{"p.A.a", "<unknown>"}));
  EXPECT_EQ(StackAt(*info, 0x25), (std::vector<std::string>{"p.A.a", "p.D.d", "p.C.c"}));
  EXPECT_EQ(StackAt(*info, 0x35), (std::vector<std::string>{"p.A.a", "<unknown>", "p.Gen.x"}));
  EXPECT_EQ(StackAt(*info, 0x45), (std::vector<std::string>{"p.A.a"}));
  // Files: methods without a file share the placeholder "".
  EXPECT_EQ(Strings(info->files), (std::vector<std::string>{"p/A.java", "", "p/D.java", "p/C.java"}));
  // Call lines: d has no table, so c's call line is 0; lambda's caller b has one.
  std::vector<uint32_t> call_lines;
  for (const auto& c : info->calls) call_lines.push_back(c.call_line_number);
  EXPECT_EQ(call_lines, (std::vector<uint32_t>{11, 21, 12, 10, 0, 10, 0}));
  // Lines: innermost frame with lines; the chain without any (0x40) adds no row of its own.
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{
                                  {0x00, 0, 21, 0}, {0x10, 0, 12, 0}, {0x20, 3, 30, 0}, {0x30, 0, 10, 0}}));
}

TEST_F(InlineTreeTest, Depth17) {
  // javac reached 17 inlined levels: 18 frames, the chain is 17 calls deep.
  constexpr int kLevels = 17;
  std::vector<MethodLines> methods;
  methods.reserve(kLevels + 1);
  for (int i = 0; i <= kLevels; ++i) {
    methods.push_back(Method("m" + std::to_string(i), "M.java", {{0, 100 * i + 1}, {2, 100 * i + 2}}));
  }
  std::vector<Frame> deep;  // innermost first
  for (int i = kLevels; i >= 0; --i) deep.push_back({&methods[i], 2});
  std::vector<Frame> half(deep.end() - 9, deep.end());  // m8 inlined into ... m0
  Sites sites;
  sites.Add(0x10, deep).Add(0x20, half).Add(0x30, deep);
  const auto* info = builder_.Build(0, kStart, 0x30, methods[0], sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Problems(*info, 0x30), "");
  ASSERT_EQ(info->calls.size(), size_t{kLevels});
  for (int i = 0; i < kLevels; ++i) {
    EXPECT_EQ(info->calls[i].depth, uint32_t(i));
    EXPECT_EQ(info->calls[i].function_index, uint32_t(i + 1));
    EXPECT_EQ(info->calls[i].call_line_number, uint32_t(100 * i + 2));
    EXPECT_EQ(info->calls[i].range_count, i < 8 ? 1u : 2u);  // m1..m8 cover all, deeper ones split
  }
  std::vector<std::string> expected;
  for (int i = 0; i <= kLevels; ++i) expected.push_back("m" + std::to_string(i));
  EXPECT_EQ(StackAt(*info, 0x2f), expected);
  EXPECT_EQ(StackAt(*info, 0x15), std::vector<std::string>(expected.begin(), expected.begin() + 9));
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{
                                  {0x00, 0, 1702, 0}, {0x10, 0, 802, 0}, {0x20, 0, 1702, 0}}));
}

TEST_F(InlineTreeTest, DfsOrderWithBranching) {
  // Two subtrees: the consumer's depth stack must return to depth 0 between them.
  Sites sites;
  sites.Add(0x04, {{&c_, 0}, {&b_, 0}, {&a_, 5}})
      .Add(0x08, {{&b_, 3}, {&a_, 5}})
      .Add(0x0c, {{&c_, 0}, {&b_, 0}, {&a_, 10}})
      .Add(0x10, {{&c_, 0}, {&b_, 3}, {&a_, 5}});
  const auto* info = builder_.Build(0, kStart, 0x10, a_, sites.view());
  ASSERT_NE(info, nullptr);
  std::vector<uint32_t> depths;
  for (const auto& c : info->calls) depths.push_back(c.depth);
  // b@11 { c@20, c@21 }, b@12 { c@20 }
  EXPECT_EQ(depths, (std::vector<uint32_t>{0, 1, 1, 0, 1}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{
                                   {0x00, 0x08}, {0x0c, 0x04}, {0x00, 0x04}, {0x0c, 0x04}, {0x08, 0x04}, {0x08, 0x04}}));
  EXPECT_EQ(info->calls[0].range_count, 2u);
  EXPECT_EQ(Problems(*info, 0x10), "");
}

TEST_F(InlineTreeTest, SkipsEmptyOutOfOrderAndOutsideSites) {
  Sites sites;
  sites.Add(0x00, {{&b_, 0}, {&a_, 5}})    // empty range at the code start
      .Add(0x10, {{&a_, 0}})
      .Add(0x10, {{&b_, 0}, {&a_, 5}})     // empty: same pc again
      .Add(0x08, {{&b_, 0}, {&a_, 5}})     // out of order
      .Add(0x20, {{&b_, 0}, {&a_, 5}})     // ends exactly at the code end: kept
      .Add(0x28, {{&c_, 0}, {&a_, 5}});    // past the code end
  const auto* info = builder_.Build(0, kStart, 0x20, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{{0, 1, 1, 11, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x10, 0x10}}));
  EXPECT_EQ(info->functions.size(), 2u);  // c never made it in
  EXPECT_EQ(Problems(*info, 0x20), "");
}

TEST_F(InlineTreeTest, NothingToDescribe) {
  Sites none;
  EXPECT_EQ(builder_.Build(0, kStart, 0x20, a_, none.view()), nullptr);
  Sites outside;
  outside.Add(0x40, {{&a_, 0}});
  EXPECT_EQ(builder_.Build(0, kStart, 0x20, a_, outside.view()), nullptr);
  Sites one;
  one.Add(0x10, {{&a_, 0}});
  EXPECT_EQ(builder_.Build(0, kStart, 0, a_, one.view()), nullptr);                      // no code
  EXPECT_EQ(builder_.Build(0, kStart, uint64_t{1} << 33, a_, one.view()), nullptr);     // offsets are u32
  // Only the root: no inline calls, but the line records are still worth a record.
  const auto* info = builder_.Build(0, kStart, 0x20, a_, one.view());
  ASSERT_NE(info, nullptr);
  EXPECT_TRUE(info->calls.empty());
  EXPECT_EQ(info->lines.size(), 1u);
}

TEST_F(InlineTreeTest, MergesConsecutiveEqualLines) {
  Sites sites;
  sites.Add(0x04, {{&a_, 0}}).Add(0x08, {{&a_, 1}}).Add(0x0c, {{&b_, 0}, {&a_, 5}}).Add(0x10, {{&b_, 1}, {&a_, 5}});
  const auto* info = builder_.Build(0, kStart, 0x10, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(Vec(info->lines), (std::vector<SamplyLineRecord>{{0x00, 0, 10, 0}, {0x08, 0, 20, 0}}));
}

TEST_F(InlineTreeTest, ReuseDoesNotLeakState) {
  Sites big;
  big.Add(0x10, {{&c_, 4}, {&b_, 3}, {&a_, 5}}).Add(0x20, {{&b_, 0}, {&a_, 10}});
  ASSERT_NE(builder_.Build(1, kStart, 0x20, a_, big.view()), nullptr);
  Sites small;
  small.Add(0x08, {{&a_, 10}}).Add(0x10, {{&a_, 0}, {&b_, 3}});  // b is the root here
  const auto* info = builder_.Build(2, kStart, 0x10, b_, small.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->timestamp, 2u);
  EXPECT_EQ(Strings(info->function_names), (std::vector<std::string>{"p.A.b", "p.A.a"}));
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{{0, 1, 1, 21, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x08, 0x08}}));
  EXPECT_EQ(Problems(*info, 0x10), "");
}

TEST_F(InlineTreeTest, RecursiveInliningUsesOneFunction) {
  Sites sites;
  sites.Add(0x10, {{&a_, 0}, {&a_, 10}}).Add(0x20, {{&a_, 0}, {&a_, 5}, {&a_, 10}});
  const auto* info = builder_.Build(0, kStart, 0x20, a_, sites.view());
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->functions.size(), 1u);
  // a@a:12 covers both sites (merged), a@a:11 only the second.
  EXPECT_EQ(Vec(info->calls), (std::vector<SamplyInlineCallRecord>{{0, 1, 0, 12, 0}, {1, 1, 0, 11, 0}}));
  EXPECT_EQ(Vec(info->ranges), (std::vector<SamplyRangeRecord>{{0x00, 0x20}, {0x10, 0x10}}));
}

// Random scope chains: reading the record back (as a consumer walks the DFS list) must give,
// for every PcDesc range, exactly the chain HotSpot reported and the innermost line.
TEST(InlineTreePropertyTest, RandomChainsRoundTrip) {
  std::mt19937 rng(12345);
  std::vector<MethodLines> methods;
  for (int i = 0; i < 25; ++i) {
    std::vector<LineNumber> lines;
    if (i % 7 != 3) {  // some methods have no line table
      for (int b = 0; b < 30; b += 3) lines.push_back({b, 1000 * (i + 1) + b});
    }
    methods.push_back(Method("m" + std::to_string(i), i % 5 == 4 ? "" : "F" + std::to_string(i % 4) + ".java", lines));
  }
  InlineTreeBuilder builder;  // reused across rounds
  for (int round = 0; round < 200; ++round) {
    Sites sites;
    std::vector<std::vector<Frame>> chains;
    std::vector<uint64_t> ends;
    uint64_t pc = 0;
    const int count = 1 + static_cast<int>(rng() % 120);
    for (int s = 0; s < count; ++s) {
      std::vector<Frame> frames;
      const int depth = static_cast<int>(rng() % 8);
      for (int d = 0; d < depth; ++d) {
        const int m = static_cast<int>(rng() % 26);  // 25: a null method
        frames.push_back({m == 25 ? nullptr : &methods[m], static_cast<int64_t>(rng() % 34) - 3});
      }
      frames.push_back({&methods[0], static_cast<int64_t>(rng() % 30)});
      pc += 1 + rng() % 40;
      sites.Add(pc, frames);
      chains.push_back(frames);
      ends.push_back(pc);
    }
    const uint64_t code_size = pc + rng() % 50;
    const auto* info = builder.Build(round, kStart, code_size, methods[0], sites.view());
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(Problems(*info, code_size), "") << "round " << round;
    uint64_t start = 0;
    for (size_t s = 0; s < chains.size(); ++s) {
      std::vector<std::string> expected{"m0"};
      for (size_t k = chains[s].size() - 1; k-- > 0;) {
        expected.push_back(chains[s][k].method ? chains[s][k].method->function : "<unknown>");
      }
      for (uint64_t off : {start, (start + ends[s]) / 2, ends[s] - 1}) {
        ASSERT_EQ(StackAt(*info, static_cast<uint32_t>(off)), expected) << "round " << round << " offset " << off;
      }
      // The line record covering this range: the innermost frame with lines, if any.
      const Frame* inner = nullptr;
      for (const Frame& f : chains[s]) {
        if (f.method && f.method->has_lines()) {
          inner = &f;
          break;
        }
      }
      if (inner != nullptr) {
        const SamplyLineRecord* row = nullptr;
        for (const auto& l : info->lines) {
          if (l.code_offset <= start) row = &l;
        }
        ASSERT_NE(row, nullptr);
        EXPECT_EQ(info->files[row->file_index], inner->method->file);
        EXPECT_EQ(row->line_number, static_cast<uint32_t>(inner->method->lines.LineAt(inner->bci)));
      }
      start = ends[s];
    }
  }
}

// The checks the tests above rely on reject what they must: the reader for samply's rules, the
// builder's promises for the rest.
TEST(InlineRecordChecksTest, RejectBrokenRecords) {
  std::vector<std::string_view> files{"F.java"};
  std::vector<std::string_view> names{"f", "g"};
  std::vector<SamplyFunctionRecord> functions{{0, 0, 1, 0, 0}, {1, 0, 5, 0, 0}};
  std::vector<SamplyInlineCallRecord> calls{{0, 1, 1, 3, 0}, {1, 1, 1, 6, 0}};
  std::vector<SamplyRangeRecord> ranges{{0, 16}, {4, 4}};
  std::vector<SamplyLineRecord> lines{{0, 0, 1, 0}, {4, 0, 5, 0}};
  auto info = [&] {
    jitdump::InlineDebugInfo i;
    i.files = files;
    i.function_names = names;
    i.functions = functions;
    i.calls = calls;
    i.ranges = ranges;
    i.lines = lines;
    return i;
  };
  EXPECT_EQ(Problems(info(), 16), "");
  EXPECT_NE(Problems(info(), 15), "");  // range past the code

  calls[1].depth = 2;
  EXPECT_NE(Problems(info(), 16).find("deeper than previous depth"), std::string::npos);
  calls[1].depth = 1;
  calls[0].depth = 1;
  EXPECT_NE(Problems(info(), 16).find("inline call 0 has depth 1"), std::string::npos);
  calls[0].depth = 0;

  calls[1].function_index = 2;
  EXPECT_NE(Problems(info(), 16).find("function_index 2 out of range"), std::string::npos);
  calls[1].function_index = 1;

  functions[1].file_index = 1;
  EXPECT_NE(Problems(info(), 16).find("file_index 1 out of range"), std::string::npos);
  functions[1].file_index = 0;
  functions[1].function_name_index = 2;
  EXPECT_NE(Problems(info(), 16).find("function_name_index 2 out of range"), std::string::npos);
  functions[1].function_name_index = 1;

  calls[1].range_count = 2;  // past the range list
  EXPECT_NE(Problems(info(), 16).find("inline calls use 3 ranges but range_count is 2"), std::string::npos);
  calls[1].range_count = 0;
  EXPECT_NE(Problems(info(), 16).find("range_count 0"), std::string::npos);
  calls[1].range_count = 1;

  ranges[1].size = 0;
  EXPECT_NE(Problems(info(), 16).find("empty"), std::string::npos);
  ranges[1].size = 4;

  lines[1].code_offset = 0;
  EXPECT_NE(Problems(info(), 16).find("ascending"), std::string::npos);
  lines[1].code_offset = 16;
  EXPECT_NE(Problems(info(), 16).find("outside the next CODE_LOAD"), std::string::npos);
  lines[1].code_offset = 4;

  ranges.push_back({8, 4});  // the range list is longer than the calls use
  EXPECT_NE(Problems(info(), 16).find("inline calls use 2 ranges but range_count is 3"), std::string::npos);
  calls[1].range_count = 2;
  ranges[2] = {6, 4};  // overlaps {4,4}
  EXPECT_NE(Problems(info(), 16).find("overlap"), std::string::npos);
  ranges[2] = {8, 4};
  EXPECT_EQ(Problems(info(), 16), "");

  functions.clear();
  EXPECT_NE(Problems(info(), 16), "");
}

// The encoded record, byte for byte, against the layout of seed 002 (samply's
// SAMPLY_JIT_CODE_DEBUG_INFO2): header, eight u32 counts, the padded file list, the padded
// function-name list, functions, inline calls, ranges, line records.
TEST_F(InlineTreeTest, EncodesSeedLayout) {
  if constexpr (std::endian::native != std::endian::little) GTEST_SKIP() << "expected bytes are little-endian";
  MethodLines f = Method("f", "A.java", {{0, 10}, {2, 11}});
  MethodLines g = Method("g", "A.java", {{0, 20}});
  Sites sites;
  sites.Add(0x04, {{&f, 0}}).Add(0x0c, {{&g, 0}, {&f, 2}});
  const auto* info = builder_.Build(0x1122334455667788, kStart, 0x10, f, sites.view());
  ASSERT_NE(info, nullptr);
  const size_t size = jitdump::InlineDebugInfoSize(*info);
  std::vector<uint8_t> bytes(size, 0xEE);
  uint8_t* end = jitdump::EncodeInlineDebugInfo(*info, bytes.data());
  ASSERT_EQ(end, bytes.data() + size);

  const std::vector<uint8_t> expected = {
      // RecordHeader: id 827346259 = 0x31504d53 ("SMP1"), total_size 160, timestamp
      0x53, 0x4d, 0x50, 0x31, 160, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
      // file_count 1, file_list_size 8 ("A.java\0" + 1 pad)
      1, 0, 0, 0, 8, 0, 0, 0,
      // function_names_count 2, function_names_list_size 4 ("f\0g\0")
      2, 0, 0, 0, 4, 0, 0, 0,
      // function_count 2, inline_call_record_count 1, range_count 1, line_record_count 2
      2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0,
      // file list
      'A', '.', 'j', 'a', 'v', 'a', 0, 0,
      // function names list
      'f', 0, 'g', 0,
      // functions: {name 0, file 0, start_line 10, col 0, flags 0}, {name 1, file 0, line 20, 0, 0}
      0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      // inline call: depth 0, range_count 1, function 1 (g), call line 11, column 0
      0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0,
      // range: start 4, size 8
      4, 0, 0, 0, 8, 0, 0, 0,
      // line records: {offset 0, file 0, line 10, col 0}, {offset 4, file 0, line 20, col 0}
      0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0,
      4, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0,
  };
  EXPECT_EQ(bytes, expected);
}

}  // namespace
}  // namespace jitdump_agent
