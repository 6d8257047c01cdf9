#include "jitdump/write/perf_map.h"

#include <gtest/gtest.h>

#include <string>

namespace jitdump {
namespace {

std::string Line(uint64_t start, uint64_t size, std::string_view name) {
  std::string out;
  AppendPerfMapLine(start, size, name, out);
  return out;
}

TEST(PerfMap, LowercaseHexWithoutPrefix) {
  EXPECT_EQ(Line(0x7f5ffef46380, 0x180, "JS:*fib"), "7f5ffef46380 180 JS:*fib\n");
  EXPECT_EQ(Line(0xABCDEF, 0xFF, "x"), "abcdef ff x\n");
}

TEST(PerfMap, ZeroAndMaximumValues) {
  EXPECT_EQ(Line(0, 0, "z"), "0 0 z\n");
  EXPECT_EQ(Line(UINT64_MAX, 1, "m"), "ffffffffffffffff 1 m\n");
}

TEST(PerfMap, SpacesInNamesAreKept) {
  EXPECT_EQ(Line(0x1000, 0x10, "void Foo.bar(int, java.lang.String)"),
            "1000 10 void Foo.bar(int, java.lang.String)\n");
}

TEST(PerfMap, LineBreaksAndNulsCannotSplitTheLine) {
  EXPECT_EQ(Line(0x1000, 0x10, "a\nb\rc"), "1000 10 a b c\n");
  EXPECT_EQ(Line(0x1000, 0x10, std::string_view("a\0b", 3)), "1000 10 a b\n");
}

TEST(PerfMap, EmptyNameGetsAPlaceholder) { EXPECT_EQ(Line(0x1000, 0x10, ""), "1000 10 [unnamed]\n"); }

TEST(PerfMap, AppendsToExistingText) {
  std::string out = "1 1 first\n";
  AppendPerfMapLine(2, 2, "second", out);
  EXPECT_EQ(out, "1 1 first\n2 2 second\n");
}

}  // namespace
}  // namespace jitdump
