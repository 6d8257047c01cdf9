// The consumer rules: what perf 6.1 and samply object to in a readable dump, and a real
// foreign file (node) accepted with its known defects as warnings.
#include "jitdump/read/consumer_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cpp-tests/read_test_support.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/regular_file.h"

namespace jitdump {
namespace {

using namespace jitdump::testing;  // Builder and the problem helpers

TEST(ReaderMalformed, VersionAndFlagsAsPerf61SeesThem) {
  Builder b;
  b.Header(2, 40, 1000, 0x6);
  const std::vector<Problem> problems = Check(Parse(b.bytes()));
  EXPECT_TRUE(HasProblem(problems, 4, Severity::kError, "perf 6.1 rejects version > 1")) << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, 32, Severity::kError, "flag")) << Dump(problems);
  Builder arch;
  arch.Header(1, 40, 1000, 1);
  EXPECT_TRUE(HasProblem(Check(Parse(arch.bytes())), 32, Severity::kWarning, "TIME_CONV"));
}
TEST(ReaderSamply, RangesMustLieInsideTheFollowingLoad) {
  const JitDump dump = Parse(SamplyWith({{0, 1, 1, 3, 0}}, {{0xF0, 0x20}}, {{0, 0, 1, 0}}, 0x100).bytes());
  EXPECT_FALSE(dump.HasErrors()) << Dump(dump.problems);
  EXPECT_TRUE(HasProblem(Check(dump), kSamplyAt, Severity::kError, "outside the next CODE_LOAD"))
      << Dump(Check(dump));
  const JitDump line_out = Parse(SamplyWith({}, {}, {{0, 0, 1, 0}, {0x100, 0, 2, 0}}, 0x100).bytes());
  EXPECT_TRUE(HasProblem(Check(line_out), kSamplyAt, Severity::kError, "line record 1"));
}
// ---- perf consumer checks ----

TEST(ReaderCheck, DebugInfoMustMatchTheNextLoadAndAscend) {
  Builder b;
  b.Header();
  const size_t d = b.DebugInfo(5, 0x2000, {{0x0FF0, 1, 0, "A.java"}, {0x1010, 2, 0, "A.java"}, {0x1008, 3, 0, "A.java"}});
  b.Load(6, 0x1000, 0x100, 0, "f");
  const std::vector<Problem> problems = Check(Parse(b.bytes()));
  EXPECT_TRUE(HasProblem(problems, d + 16, Severity::kError, "differs from the next CODE_LOAD")) << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, d + 32, Severity::kError, "below the load's code_addr")) << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, d + 32 + 2 * 23, Severity::kError, "must ascend")) << Dump(problems);
}

TEST(ReaderCheck, DebugInfoWithoutLoadAndReplacedDebugInfo) {
  Builder b;
  b.Header();
  const size_t first = b.DebugInfo(5, 0x1000, {{0x1000, 1, 0, "A.java"}});
  const size_t second = b.DebugInfo(5, 0x1000, {{0x1000, 1, 0, "A.java"}});
  b.Load(6, 0x1000, 0x100, 0, "f");
  const size_t dangling = b.DebugInfo(7, 0x3000, {{0x3000, 1, 0, "A.java"}});
  const std::vector<Problem> problems = Check(Parse(b.bytes()));
  EXPECT_TRUE(HasProblem(problems, second, Severity::kWarning, "replaces the one at offset " + std::to_string(first)))
      << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, dangling, Severity::kWarning, "not followed by a CODE_LOAD")) << Dump(problems);
  EXPECT_EQ(Count(problems, Severity::kError), 0u);
}

TEST(ReaderCheck, CodeIndexMustBeUnique) {
  Builder b;
  b.Header();
  const size_t first = b.Load(5, 0x1000, 8, 7, "f");
  const size_t second = b.Load(6, 0x2000, 8, 7, "g");
  const std::vector<Problem> problems = Check(Parse(b.bytes()));
  EXPECT_TRUE(HasProblem(problems, second + 48, Severity::kError, "repeats the CODE_LOAD at offset " + std::to_string(first)))
      << Dump(problems);
}

TEST(ReaderCheck, RecordsOutOfTimestampOrderAreFine) {
  Builder b;
  b.Header(1, 40, 100);
  b.Load(500, 0x1000, 8, 0, "f");
  b.Load(200, 0x2000, 8, 1, "g");  // our agent moves load timestamps earlier
  b.Close(600);
  EXPECT_TRUE(Check(Parse(b.bytes())).empty());
}

TEST(ReaderCheck, HeaderTimestampFromAnotherClock) {
  Builder b;
  b.Header(1, 40, 1795342573887685ull);  // wall-clock microseconds, as node writes
  b.Load(3766336128830ull, 0x1000, 8, 0, "f");
  b.Load(3767222984829ull, 0x2000, 8, 1, "g");
  const std::vector<Problem> problems = Check(Parse(b.bytes()));
  EXPECT_TRUE(HasProblem(problems, 24, Severity::kWarning, "another clock")) << Dump(problems);
  EXPECT_EQ(Count(problems, Severity::kError), 0u);
}
// ---- a real foreign file ----

TEST(ReaderNodeFixture, AcceptedWithItsKnownDefectsAsWarnings) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadWholeFile(JITDUMP_FIXTURE_DIR "/node-v20-fib.jitdump", &bytes).ok());
  const JitDump dump = Parse(bytes);
  ASSERT_TRUE(dump.header_ok);
  EXPECT_FALSE(dump.cross_endian);
  EXPECT_EQ(dump.header.version, 1u);
  EXPECT_EQ(dump.header.pad1, 0xDEADBEEFu);
  EXPECT_EQ(dump.records.size(), 90u);
  EXPECT_FALSE(dump.truncated_offset.has_value());
  const std::vector<Problem> problems = Check(dump);
  EXPECT_EQ(Count(problems, Severity::kError), 0u) << Dump(problems);
  EXPECT_TRUE(HasProblem(problems, 16, Severity::kWarning, "0xdeadbeef"));
  EXPECT_TRUE(HasProblem(problems, 24, Severity::kWarning, "another clock"));
  EXPECT_TRUE(std::any_of(problems.begin(), problems.end(),
                          [](const Problem& p) { return p.message.find("PC+0x40") != std::string::npos; }));
  for (uint64_t offset : {26440, 29636, 29984, 30941, 31901}) {
    EXPECT_TRUE(HasProblem(problems, offset, Severity::kWarning, "corrupted file name")) << offset;
  }
  size_t loads = 0, debug = 0, unwind = 0;
  for (const Record& r : dump.records) {
    loads += r.load() != nullptr;
    debug += r.debug_info() != nullptr;
    unwind += r.unwinding() != nullptr;
  }
  EXPECT_EQ(loads, 35u);
  EXPECT_EQ(unwind, 35u);
  EXPECT_EQ(debug, 20u);
}

}  // namespace
}  // namespace jitdump
