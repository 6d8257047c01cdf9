// Reading a file the user named: only regular files, opened without blocking; an empty file is
// empty bytes; errors name the failing call.
#include "jitdump/read/regular_file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
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

class RegularFileTest : public TempDirTest {};

TEST_F(RegularFileTest, ReadsTheWholeFile) {
  std::string contents(100000, 'x');
  contents[0] = 'J';
  contents.back() = 'D';
  const std::string path = Write("jit-1.dump", contents);
  std::vector<uint8_t> copy;
  ASSERT_TRUE(ReadWholeFile(path, &copy).ok());
  EXPECT_EQ(std::string(copy.begin(), copy.end()), contents);
  int fd = -1;
  uint64_t size = 0;
  ASSERT_TRUE(OpenRegularFile(path, &fd, &size).ok());
  EXPECT_EQ(size, contents.size());
  EXPECT_GE(fd, 0);
  ::close(fd);
}

TEST_F(RegularFileTest, EmptyFileIsEmptyBytes) {
  const std::string path = Write("empty.dump", "");
  std::vector<uint8_t> copy{1, 2};
  ASSERT_TRUE(ReadWholeFile(path, &copy).ok());
  EXPECT_TRUE(copy.empty());
}

TEST_F(RegularFileTest, OnlyRegularFiles) {
  int fd = 7;
  uint64_t size = 0;
  const Status directory = OpenRegularFile(dir_, &fd, &size);
  EXPECT_FALSE(directory.ok());
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(directory.ToString(), "a directory, not a regular file");
  const Status missing = OpenRegularFile(dir_ + "/absent.dump", &fd, &size);
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.err_no(), ENOENT);
  EXPECT_STREQ(missing.operation(), "open");
  std::vector<uint8_t> copy;
  EXPECT_EQ(ReadWholeFile(dir_, &copy).ToString(), "a directory, not a regular file");
}

// A FIFO nobody writes is refused at once: the open must not wait for a writer.
TEST_F(RegularFileTest, FifoRefusedWithoutBlocking) {
  const std::string fifo = dir_ + "/jit-2.dump";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int fd = -1;
  uint64_t size = 0;
  const Status status = OpenRegularFile(fifo, &fd, &size);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.ToString(), "a FIFO, not a regular file");
  EXPECT_EQ(fd, -1);
}

// A symbolic link to a regular file is followed: the invoking user named it.
TEST_F(RegularFileTest, FollowsALinkTheUserNamed) {
  const std::string path = Write("jit-3.dump", "abc");
  const std::string link = dir_ + "/link.dump";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  std::vector<uint8_t> copy;
  ASSERT_TRUE(ReadWholeFile(link, &copy).ok());
  EXPECT_EQ(std::string(copy.begin(), copy.end()), "abc");
}

}  // namespace
}  // namespace jitdump
