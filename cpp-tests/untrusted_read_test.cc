// Reading files another user controls (untrusted_file.h) and dumps through a window
// (decoder.h ParseFile): links, FIFOs and devices refused unread, a file cut shorter while it is
// read decoded as a truncated tail, the memory budget kept.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpp-tests/reader_test_builder.h"
#include "cpp-tests/temp_dir_test.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/untrusted_file.h"

namespace jitdump {
namespace {

class UntrustedReadTest : public TempDirTest {
 protected:
  // A dump of `loads` CODE_LOADs with a DEBUG_INFO each.
  std::string Dump(int loads) {
    testing::Builder b;
    b.Header();
    for (int i = 0; i < loads; ++i) {
      const uint64_t addr = 0x1000 + 0x100 * static_cast<uint64_t>(i);
      b.DebugInfo(2000, addr, {{addr, 10 + i, 0, "pkg/Some/LongFileName.java"}});
      b.Load(2000, addr, 32, static_cast<uint64_t>(i), "pkg.Cls.method" + std::to_string(i) + "()");
    }
    return std::string(b.bytes().begin(), b.bytes().end());
  }
  JitDump Windowed(const std::string& path, FileLimits limits, Status* status, uint64_t size = 0) {
    int fd = -1;
    struct stat st {};
    EXPECT_TRUE(OpenUntrusted(path, &fd, &st).ok());
    JitDump dump;
    *status = ParseFile(fd, size != 0 ? size : static_cast<uint64_t>(st.st_size), limits, &dump);
    ::close(fd);
    return dump;
  }
};

TEST_F(UntrustedReadTest, RefusesWhatIsNoRegularFileWithoutReadingIt) {
  const std::string secret = Write("secret", "root:$6$hash\n");
  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(secret.c_str(), link.c_str()), 0);
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int fd = 0;
  struct stat st {};
  Status s = OpenUntrusted(link, &fd, &st);
  EXPECT_EQ(s.ToString(), "a symbolic link, not followed");
  EXPECT_EQ(fd, -1);
  s = OpenUntrusted(fifo, &fd, &st);  // would block forever without O_NONBLOCK
  EXPECT_EQ(s.ToString(), "a FIFO, not a regular file");
  EXPECT_EQ(OpenUntrusted(dir_, &fd, &st).ToString(), "a directory, not a regular file");
  EXPECT_EQ(OpenUntrusted("/dev/null", &fd, &st).ToString(), "a device, not a regular file");
  std::string text;
  EXPECT_TRUE(ReadUntrusted(secret, 100, &text).ok());
  EXPECT_EQ(text, "root:$6$hash\n");
  EXPECT_FALSE(ReadUntrusted(secret, 4, &text).ok());  // larger than allowed: refused unread
  EXPECT_TRUE(text.empty());
}

TEST_F(UntrustedReadTest, TheWindowDecodesWhatTheWholeFileDecodes) {
  const std::string bytes = Dump(500);
  const std::string path = Write("jit-1.dump", bytes);
  const JitDump whole = Parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  for (size_t window : {size_t{16}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    FileLimits limits;
    limits.window = window;
    Status status;
    const JitDump dump = Windowed(path, limits, &status);
    ASSERT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(dump.records.size(), whole.records.size()) << "window " << window;
    for (size_t i = 0; i < whole.records.size(); ++i) {
      EXPECT_EQ(dump.records[i].offset, whole.records[i].offset);
      if (whole.records[i].load()) {
        EXPECT_EQ(dump.records[i].load()->name, whole.records[i].load()->name);
      }
      if (whole.records[i].debug_info()) {
        EXPECT_EQ(dump.records[i].debug_info()->entries.size(), whole.records[i].debug_info()->entries.size());
      }
    }
    EXPECT_EQ(dump.problems.size(), whole.problems.size());
  }
}

TEST_F(UntrustedReadTest, AFileCutShorterWhileReadIsATruncatedTail) {
  const std::string bytes = Dump(500);
  const std::string path = Write("jit-1.dump", bytes);
  // The size the reader saw when it opened the file, then the file cut to a third: a mapping
  // would fault (SIGBUS) on the missing pages; the window sees fewer bytes.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(bytes.size() / 3)), 0);
  FileLimits limits;
  limits.window = 256;
  Status status;
  const JitDump dump = Windowed(path, limits, &status, bytes.size());
  EXPECT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(dump.truncated_offset.has_value());
  EXPECT_LE(*dump.truncated_offset, bytes.size() / 3);
  EXPECT_GT(dump.records.size(), 100u);
  EXPECT_LT(dump.records.size(), 1000u);
}

TEST_F(UntrustedReadTest, TheBudgetRefusesADumpThatDoesNotFit) {
  const std::string path = Write("jit-1.dump", Dump(2000));
  FileLimits limits;
  Status status;
  uint64_t used = 0;
  {
    int fd = -1;
    struct stat st {};
    ASSERT_TRUE(OpenUntrusted(path, &fd, &st).ok());
    JitDump dump;
    ASSERT_TRUE(ParseFile(fd, static_cast<uint64_t>(st.st_size), limits, &dump, &used).ok());
    ::close(fd);
    EXPECT_GT(used, 2000u * sizeof(Record));
  }
  limits.memory = used / 2;
  const JitDump dump = Windowed(path, limits, &status);
  EXPECT_EQ(status.ToString(), "over the memory budget");
  EXPECT_TRUE(dump.records.empty());
  limits.memory = used;
  EXPECT_EQ(Windowed(path, limits, &status).records.size(), 4000u);
  EXPECT_TRUE(status.ok());
}

TEST_F(UntrustedReadTest, DeferredSideRecordsDecodeLaterAsTheyWouldHaveAtOnce) {
  const std::string bytes = Dump(50);
  const std::string path = Write("jit-1.dump", bytes);
  const JitDump whole = Parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  int fd = -1;
  struct stat st {};
  ASSERT_TRUE(OpenUntrusted(path, &fd, &st).ok());
  FileLimits limits;
  JitDump dump;
  uint64_t used_decoded = 0;
  ASSERT_TRUE(ParseFile(fd, static_cast<uint64_t>(st.st_size), limits, &dump, &used_decoded).ok());
  limits.defer_side_records = true;
  uint64_t used = 0;
  ASSERT_TRUE(ParseFile(fd, static_cast<uint64_t>(st.st_size), limits, &dump, &used).ok());
  ASSERT_EQ(dump.records.size(), whole.records.size());
  // No entry decoded, no file name copied: 50 entries of a DebugLine and a 27-byte name less.
  EXPECT_LE(used + 50 * (sizeof(DebugLine) + 28), used_decoded);
  const size_t debug = static_cast<size_t>(dump.records[1].load()->debug_info);
  EXPECT_EQ(debug, 0u);
  EXPECT_TRUE(dump.records[debug].deferred);
  EXPECT_EQ(dump.records[debug].debug_info(), nullptr);
  // Over what is left of a budget: refused, the record still deferred.
  EXPECT_EQ(DecodeDeferred(fd, &dump, debug, 8).ToString(), "over the memory budget");
  EXPECT_TRUE(dump.records[debug].deferred);
  uint64_t taken = 0;
  ASSERT_TRUE(DecodeDeferred(fd, &dump, debug, 0, &taken).ok());
  EXPECT_FALSE(dump.records[debug].deferred);
  ASSERT_NE(dump.records[debug].debug_info(), nullptr);
  const DebugLine& line = dump.records[debug].debug_info()->entries.at(0);
  EXPECT_EQ(line.file, whole.records[debug].debug_info()->entries.at(0).file);
  EXPECT_EQ(line.line, 10);
  EXPECT_GT(taken, 0u);
  // The last one after the file was cut short: it stays deferred.
  const size_t last = static_cast<size_t>(dump.records.back().load()->debug_info);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(dump.records[last].offset + 8)), 0);
  EXPECT_FALSE(DecodeDeferred(fd, &dump, last).ok());
  EXPECT_TRUE(dump.records[last].deferred);
  ::close(fd);
}

}  // namespace
}  // namespace jitdump
