// JvmCode::Load keeps a dump open to decode a load's DEBUG_INFO and inline records when a sample
// first lands in it, but only up to DumpBudget::kMaxKeptOpen files: past that a dump is decoded
// whole at once and closed, so a report on a recording of many JVMs does not run out of file
// descriptors. Either way a load's line is the same.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/report/jvm_code.h"

namespace jitdump::report {
namespace {

constexpr uint64_t kCode = 0x7f0000200000;

size_t OpenDescriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A dump of one compiled method whose DEBUG_INFO puts kCode + 0x10 on line 42 of Chain.java.
std::string WriteDump(const std::string& dir, int i) {
  testing::Builder b;
  b.Header(1, 40, 10);
  b.DebugInfo(20, kCode, {{kCode, 41, 0, "p/Chain.java"}, {kCode + 0x10, 42, 0, "p/Chain.java"}});
  b.Load(30, kCode, 0x100, 1, "p.Chain.main(java.lang.String[])");
  const std::string path = dir + "/jit-" + std::to_string(1000 + i) + ".dump";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.bytes().data()),
                                              static_cast<std::streamsize>(b.bytes().size()));
  return path;
}

size_t LoadRecord(const JvmCode& code) {
  for (size_t i = 0; i < code.dump().records.size(); ++i) {
    if (code.dump().records[i].load() != nullptr) return i;
  }
  ADD_FAILURE() << "no load in " << code.path();
  return 0;
}

TEST(JvmCodeTest, KeepsAtMostKMaxKeptOpenDumpsOpenAndNamesLinesEitherWay) {
  char dir_template[] = "/tmp/jvm_code_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const int dumps = static_cast<int>(DumpBudget::kMaxKeptOpen) + 8;
  const size_t before = OpenDescriptors();

  DumpBudget budget;
  std::vector<std::unique_ptr<JvmCode>> codes;
  for (int i = 0; i < dumps; ++i) {
    std::string error;
    codes.push_back(JvmCode::Load(WriteDump(dir, i), &budget, &error));
    ASSERT_NE(codes.back(), nullptr) << error;
  }
  EXPECT_EQ(budget.kept_open, DumpBudget::kMaxKeptOpen);
  EXPECT_EQ(OpenDescriptors() - before, DumpBudget::kMaxKeptOpen);

  // The first dumps decode their DEBUG_INFO now, from the open file; the last ones did at once.
  for (int i : {0, dumps - 1}) {
    JvmCode& code = *codes[static_cast<size_t>(i)];
    const std::vector<JitLine> chain = code.Chain(LoadRecord(code), kCode + 0x18);
    ASSERT_EQ(chain.size(), 1u) << i;
    EXPECT_EQ(chain[0].file, "p/Chain.java") << i;
    EXPECT_EQ(chain[0].line, 42u) << i;
    EXPECT_EQ(code.undecoded(), 0u) << i;
  }

  codes.clear();
  EXPECT_EQ(OpenDescriptors(), before);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace jitdump::report
