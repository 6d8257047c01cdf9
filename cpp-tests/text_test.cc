// jitdump/format/text.h: the rules the agent and the tool share (a path the agent expanded must be found
// again by the report).
#include "jitdump/format/text.h"

#include <gtest/gtest.h>

namespace jitdump {
namespace {

TEST(TextTest, TrimSpaceRemovesSpaceTabCrLfAtBothEnds) {
  EXPECT_EQ(TrimSpace(" \t dir=/tmp \r\n"), "dir=/tmp");
  EXPECT_EQ(TrimSpace("a b"), "a b");
  EXPECT_EQ(TrimSpace(" \r\n\t"), "");
  EXPECT_EQ(TrimSpace(""), "");
}

TEST(TextTest, BaseNameIsWhatFollowsTheLastSlash) {
  EXPECT_EQ(BaseName("/tmp/jit/jit-42.dump"), "jit-42.dump");
  EXPECT_EQ(BaseName("jit-42.dump"), "jit-42.dump");
  EXPECT_EQ(BaseName("run/"), "");
  EXPECT_EQ(BaseName("/"), "");
}

TEST(TextTest, ExpandPidReplacesPercentPAndPercentPercent) {
  EXPECT_EQ(ExpandPid("/tmp/jit-%p/x%%p", 42), "/tmp/jit-42/x%p");
  EXPECT_EQ(ExpandPid("stats-%p-%p.json", 7), "stats-7-7.json");
  EXPECT_EQ(ExpandPid("100%", 7), "100%");
  EXPECT_EQ(ExpandPid("%q%", 7), "%q%");
  EXPECT_EQ(ExpandPid("plain", 7), "plain");
}

TEST(TextTest, PrintableEscapesEveryByteOutsidePrintableAscii) {
  EXPECT_EQ(Printable("a b/c~"), "a b/c~");
  EXPECT_EQ(Printable(std::string_view("\x1b[31m\n\0\x7f", 8)), "\\x1b[31m\\x0a\\x00\\x7f");
  EXPECT_EQ(Printable("caf\xc3\xa9"), "caf\\xc3\\xa9");
}

TEST(TextTest, EscapedTextKeepsNonAsciiWhenAskedAndCutsAtMax) {
  EXPECT_EQ(EscapedText("caf\xc3\xa9\t", /*keep_non_ascii=*/true), "caf\xc3\xa9\\x09");
  EXPECT_EQ(EscapedText("abcdef", false, 3), "abc...");
  EXPECT_EQ(EscapedText("abc", false, 3), "abc");
  EXPECT_EQ(EscapedText("\x01\x02", false, 1), "\\x01...");
}

}  // namespace
}  // namespace jitdump
