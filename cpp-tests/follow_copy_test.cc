// FollowCopy (jitdump/tool/follow_copy.h): a dump copied while it grows holds only whole
// records, in order, byte for byte, with the pid fields stamped when asked; the result is
// checked with the read half, not with the copier's own view.
#include "jitdump/tool/follow_copy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/dump.h"

namespace jitdump::tool {
namespace {

using jitdump::testing::Builder;

// A source file the test appends to and a destination the copier writes, both unlinked at once.
class Files {
 public:
  Files() {
    char source_name[] = "/tmp/follow_copy_src_XXXXXX";
    char dest_name[] = "/tmp/follow_copy_dst_XXXXXX";
    source_ = ::mkstemp(source_name);
    dest_ = ::mkstemp(dest_name);
    dest_path_ = dest_name;
    ::unlink(source_name);
  }
  ~Files() {
    ::close(source_);
    ::close(dest_);
    ::unlink(dest_path_.c_str());
  }
  void Append(const std::vector<uint8_t>& bytes, size_t from, size_t to) {
    ASSERT_EQ(::pwrite(source_, bytes.data() + from, to - from, static_cast<off_t>(from)),
              static_cast<ssize_t>(to - from));
  }
  std::vector<uint8_t> Dest() const {
    std::vector<uint8_t> bytes(static_cast<size_t>(::lseek(dest_, 0, SEEK_END)));
    EXPECT_EQ(::pread(dest_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    return bytes;
  }
  JitDump Parsed() const { return Parse(Dest()); }
  int source() const { return source_; }
  int dest() const { return dest_; }

 private:
  int source_ = -1;
  int dest_ = -1;
  std::string dest_path_;
};

Builder ThreeRecords(bool big_endian = false) {
  Builder b(big_endian);
  b.Header();
  b.Load(2000, 0x1000, 32, 0, "first");
  b.DebugInfo(2001, 0x2000, {{0x2004, 7, 0, "A.java"}});
  b.Load(2002, 0x2000, 16, 1, "second");
  b.Move(2003, 0x1000, 0x3000, 32, 0);
  b.Close(2004);
  return b;
}

TEST(FollowCopy, CopiesOnlyWholeRecordsWhileTheFileGrows) {
  const Builder b = ThreeRecords();
  Files files;
  FollowCopy copy(files.source(), files.dest(), {});
  std::string error;
  // Cut at every byte: the copy is always a prefix of whole records and ends identical.
  size_t written = 0;
  for (size_t cut = 1; cut <= b.size(); cut += 7) {
    files.Append(b.bytes(), written, cut);
    written = cut;
    ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
    const std::vector<uint8_t> dest = files.Dest();
    ASSERT_LE(dest.size(), cut);
    EXPECT_TRUE(std::equal(dest.begin(), dest.end(), b.bytes().begin()));
    EXPECT_EQ(dest.size() + copy.pending_bytes(), cut);
  }
  files.Append(b.bytes(), written, b.size());
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_EQ(files.Dest(), b.bytes());
  EXPECT_EQ(copy.records(), 5u);
  EXPECT_EQ(copy.pending_bytes(), 0u);
}

TEST(FollowCopy, StampsThePidInBothByteOrders) {
  for (const bool big_endian : {false, true}) {
    const Builder b = ThreeRecords(big_endian);
    Files files;
    files.Append(b.bytes(), 0, b.size());
    FollowCopy copy(files.source(), files.dest(), {.pid = 77});
    std::string error;
    ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
    const JitDump dump = files.Parsed();
    EXPECT_EQ(dump.cross_endian, big_endian);
    EXPECT_EQ(dump.header.pid, 77u);
    EXPECT_FALSE(dump.HasErrors());
    size_t loads = 0, moves = 0;
    for (const Record& record : dump.records) {
      if (const LoadBody* load = record.load()) {
        ++loads;
        EXPECT_EQ(load->pid, 77u);
        EXPECT_EQ(load->tid, 77u);
      }
      if (const MoveBody* move = record.move()) {
        ++moves;
        EXPECT_EQ(move->pid, 77u);
        EXPECT_EQ(move->tid, 77u);
      }
    }
    EXPECT_EQ(loads, 2u);
    EXPECT_EQ(moves, 1u);
    EXPECT_EQ(files.Dest().size(), b.size());  // nothing but the pid fields changed
  }
}

TEST(FollowCopy, CopiesARecordLargerThanItsReadChunk) {
  Builder b;
  b.Header();
  b.Load(2000, 0x1000, 3u << 20, 0, "huge");
  b.Close(2001);
  Files files;
  files.Append(b.bytes(), 0, b.size() - 100);
  FollowCopy copy(files.source(), files.dest(), {});
  std::string error;
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_EQ(copy.records(), 0u);  // the huge load is incomplete
  files.Append(b.bytes(), b.size() - 100, b.size());
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_EQ(copy.records(), 2u);
  EXPECT_EQ(files.Dest(), b.bytes());
}

TEST(FollowCopy, WaitsOnASizeFieldNoRecordCanHave) {
  Builder b = ThreeRecords();
  const size_t torn = b.Begin(0, 3000);  // total_size stays 0: a prefix not written yet
  b.Zeros(8);
  Files files;
  files.Append(b.bytes(), 0, b.size());
  FollowCopy copy(files.source(), files.dest(), {});
  std::string error;
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_EQ(files.Dest().size(), torn);
  EXPECT_EQ(copy.pending_bytes(), b.size() - torn);
}

TEST(FollowCopy, RefusesAFileThatIsNotAJitdump) {
  Files files;
  const std::vector<uint8_t> elf(64, 0x7f);
  files.Append(elf, 0, elf.size());
  FollowCopy copy(files.source(), files.dest(), {});
  std::string error;
  EXPECT_FALSE(copy.CopyAvailable(&error));
  EXPECT_NE(error.find("not a jitdump"), std::string::npos) << error;
  EXPECT_FALSE(copy.CopyAvailable(&error));  // stays failed
  EXPECT_TRUE(files.Dest().empty());
}

TEST(FollowCopy, WaitsForAHeaderNotWrittenYet) {
  const Builder b = ThreeRecords();
  Files files;
  FollowCopy copy(files.source(), files.dest(), {});
  std::string error;
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;  // empty source
  files.Append(b.bytes(), 0, 20);
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_TRUE(files.Dest().empty());
  EXPECT_EQ(copy.pending_bytes(), 20u);
  files.Append(b.bytes(), 20, b.size());
  ASSERT_TRUE(copy.CopyAvailable(&error)) << error;
  EXPECT_EQ(files.Dest(), b.bytes());
}

}  // namespace
}  // namespace jitdump::tool
