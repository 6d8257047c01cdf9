#include "agent/core/line_map.h"

#include <gtest/gtest.h>

#include <vector>

namespace jitdump_agent {
namespace {

MethodLines Method(std::string file, std::vector<LineNumber> lines) {
  MethodLines m;
  m.function = "m";
  m.file = std::move(file);
  m.lines = LineTable(std::move(lines));
  return m;
}

TEST(LineTableTest, UnsortedTableIsSortedByBci) {
  // JVMTI returns class-file order; a finally block can put a later line at a lower index.
  const LineTable t({{10, 30}, {0, 20}, {5, 25}});
  EXPECT_EQ(t.LineAt(0), 20);
  EXPECT_EQ(t.LineAt(4), 20);
  EXPECT_EQ(t.LineAt(5), 25);
  EXPECT_EQ(t.LineAt(9), 25);
  EXPECT_EQ(t.LineAt(10), 30);
  EXPECT_EQ(t.LineAt(1000), 30);
}

TEST(LineTableTest, NegativeBciMapsToTheMethodsFirstLine) {
  const LineTable t({{3, 12}, {0, 11}});
  EXPECT_EQ(t.LineAt(-1), 11);  // InvocationEntryBci / SynchronizationEntryBCI
  EXPECT_EQ(t.LineAt(-3), 11);  // UnwindBci
  EXPECT_EQ(t.FirstLine(), 11);
}

TEST(LineTableTest, BciBeforeFirstEntryMapsToFirstLine) {
  const LineTable t({{4, 40}});
  EXPECT_EQ(t.LineAt(0), 40);
}

TEST(LineTableTest, EmptyTableHasNoLine) {
  const LineTable t;
  EXPECT_EQ(t.LineAt(3), 0);
  EXPECT_EQ(t.FirstLine(), 0);
}

// The heart of it: a PcDesc's pc ENDS the range it describes.
TEST(BuildLineRowsTest, RowForPcDescStartsAtPreviousPc) {
  const MethodLines m = Method("p/A.java", {{0, 10}, {4, 11}, {8, 12}});
  const Frame f0{&m, 0}, f4{&m, 4}, f8{&m, 8};
  const PcSite sites[] = {{0x1010, {&f0, 1}}, {0x1020, {&f4, 1}}, {0x1030, {&f8, 1}}};
  const std::vector<LineRow> rows = BuildLineRows(0x1000, 0x1100, sites);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].addr, 0x1000u);  // code start up to the first pc: line 10
  EXPECT_EQ(rows[0].line, 10);
  EXPECT_EQ(rows[1].addr, 0x1010u);  // [0x1010, 0x1020): line 11, perf's agent says 0x1020
  EXPECT_EQ(rows[1].line, 11);
  EXPECT_EQ(rows[2].addr, 0x1020u);
  EXPECT_EQ(rows[2].line, 12);
  EXPECT_EQ(*rows[2].file, "p/A.java");
}

TEST(BuildLineRowsTest, ConsecutiveSameLinesMerge) {
  const MethodLines m = Method("A.java", {{0, 10}, {9, 11}});
  const Frame a{&m, 0}, b{&m, 2}, c{&m, 9};
  const PcSite sites[] = {{0x10, {&a, 1}}, {0x20, {&b, 1}}, {0x30, {&c, 1}}, {0x40, {&c, 1}}};
  const std::vector<LineRow> rows = BuildLineRows(0, 0x100, sites);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].addr, 0u);
  EXPECT_EQ(rows[1].addr, 0x20u);
  EXPECT_EQ(rows[1].line, 11);
}

TEST(BuildLineRowsTest, InlinedLeafCarriesItsOwnFileAndLine) {
  const MethodLines caller = Method("p/Caller.java", {{0, 100}, {7, 101}});
  const MethodLines callee = Method("q/Callee.java", {{0, 5}});
  const Frame chain[] = {{&callee, 0}, {&caller, 7}};  // innermost first
  const Frame own[] = {{&caller, 0}};
  const PcSite sites[] = {{0x10, own}, {0x30, chain}};
  const std::vector<LineRow> rows = BuildLineRows(0, 0x40, sites);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(*rows[1].file, "q/Callee.java");
  EXPECT_EQ(rows[1].line, 5);
  EXPECT_EQ(rows[1].addr, 0x10u);
}

TEST(BuildLineRowsTest, FrameWithoutLinesFallsBackToCaller) {
  const MethodLines caller = Method("C.java", {{0, 7}, {3, 8}});
  const MethodLines lambda = Method("", {});  // hidden class: no SourceFile, no table
  const Frame chain[] = {{&lambda, 0}, {nullptr, 0}, {&caller, 3}};
  const PcSite sites[] = {{0x8, chain}};
  const std::vector<LineRow> rows = BuildLineRows(0, 0x10, sites);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].line, 8);
}

TEST(BuildLineRowsTest, NoLineInformationAnywhereGivesNoRows) {
  const MethodLines none = Method("", {});
  const Frame f{&none, 0};
  const PcSite sites[] = {{0x8, {&f, 1}}};
  EXPECT_TRUE(BuildLineRows(0, 0x10, sites).empty());
}

// perf's genelf ends the line sequence at the last entry: a closing row at the end of the last
// described range keeps the last real row alive.
TEST(BuildLineRowsTest, ClosingRowEndsTheLastDescribedRange) {
  const MethodLines m = Method("A.java", {{0, 10}, {4, 11}});
  const MethodLines none = Method("", {});
  const Frame a{&m, 0}, b{&m, 4}, dark{&none, 0};
  const PcSite sites[] = {{0x10, {&a, 1}}, {0x30, {&b, 1}}, {0x50, {&dark, 1}}};
  const std::vector<LineRow> rows = BuildLineRows(0, 0x60, sites, /*closing_row=*/true);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].addr, 0x10u);
  EXPECT_EQ(rows[1].line, 11);
  EXPECT_EQ(rows[2].addr, 0x30u);  // where line 11's range ends; the dark range after it gets none
  EXPECT_EQ(rows[2].line, 11);
  EXPECT_EQ(BuildLineRows(0, 0x60, sites).size(), 2u);
}

TEST(BuildLineRowsTest, ClosingRowMayEndAtCodeEnd) {
  const MethodLines m = Method("A.java", {{0, 10}});
  const Frame a{&m, 0};
  const PcSite sites[] = {{0x40, {&a, 1}}};
  const std::vector<LineRow> rows = BuildLineRows(0, 0x40, sites, true);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].addr, 0x40u);
}

TEST(BuildLineRowsTest, OutOfRangeAndDuplicatePcsAreIgnored) {
  const MethodLines m = Method("A.java", {{0, 1}, {1, 2}, {2, 3}});
  const Frame a{&m, 0}, b{&m, 1}, c{&m, 2};
  const PcSite sites[] = {{0x100, {&a, 1}}, {0x100, {&b, 1}}, {0x120, {&c, 1}}, {0x900, {&a, 1}}};
  const std::vector<LineRow> rows = BuildLineRows(0x100, 0x130, sites);
  ASSERT_EQ(rows.size(), 1u);  // 0x100 ends an empty range; 0x900 lies past the code
  EXPECT_EQ(rows[0].addr, 0x100u);
  EXPECT_EQ(rows[0].line, 3);
}

}  // namespace
}  // namespace jitdump_agent
