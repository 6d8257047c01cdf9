// Reading a dump file: mapped without a copy, or read whole; only regular files; an empty file
// is empty bytes; errors name the failing call.
#include "jitdump/read/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cpp-tests/temp_dir_test.h"

namespace jitdump {
namespace {

class MappedFileTest : public TempDirTest {};

TEST_F(MappedFileTest, MapsTheWholeFile) {
  std::string contents(100000, 'x');
  contents[0] = 'J';
  contents.back() = 'D';
  const std::string path = Write("jit-1.dump", contents);
  MappedFile file;
  ASSERT_TRUE(file.Open(path).ok());
  ASSERT_EQ(file.bytes().size(), contents.size());
  EXPECT_EQ(std::string(file.bytes().begin(), file.bytes().end()), contents);
  std::vector<uint8_t> copy;
  ASSERT_TRUE(ReadWholeFile(path, &copy).ok());
  EXPECT_EQ(std::string(copy.begin(), copy.end()), contents);
}

TEST_F(MappedFileTest, EmptyFileIsEmptyBytes) {
  const std::string path = Write("empty.dump", "");
  MappedFile file;
  ASSERT_TRUE(file.Open(path).ok());
  EXPECT_TRUE(file.bytes().empty());
  std::vector<uint8_t> copy{1, 2};
  ASSERT_TRUE(ReadWholeFile(path, &copy).ok());
  EXPECT_TRUE(copy.empty());
}

TEST_F(MappedFileTest, OnlyRegularFiles) {
  MappedFile file;
  const Status directory = file.Open(dir_);
  EXPECT_FALSE(directory.ok());
  EXPECT_EQ(directory.err_no(), EINVAL);
  EXPECT_NE(directory.ToString().find("not a regular file"), std::string::npos) << directory.ToString();
  const Status missing = file.Open(dir_ + "/absent.dump");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.err_no(), ENOENT);
  EXPECT_STREQ(missing.operation(), "open");
  EXPECT_TRUE(file.bytes().empty());
  std::vector<uint8_t> copy;
  EXPECT_EQ(ReadWholeFile(dir_, &copy).err_no(), EINVAL);
}

TEST_F(MappedFileTest, ReopeningReplacesTheMapping) {
  MappedFile file;
  ASSERT_TRUE(file.Open(Write("a.dump", "first")).ok());
  ASSERT_TRUE(file.Open(Write("b.dump", "second!")).ok());
  EXPECT_EQ(std::string(file.bytes().begin(), file.bytes().end()), "second!");
  EXPECT_FALSE(file.Open(dir_ + "/absent.dump").ok());
  EXPECT_TRUE(file.bytes().empty());
}

}  // namespace
}  // namespace jitdump
