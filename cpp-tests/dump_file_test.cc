// The dump file: safe creation, perf's executable marker mapping, whole-record appends that
// never leave a torn record, and every record type read back by the decoder.
#include "jitdump/write/dump_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/regular_file.h"
#include "jitdump/write/safe_file.h"

namespace jitdump {
namespace {

// Where the test directories go: $TMPDIR when set (a machine whose /tmp is mounted noexec
// points it elsewhere for the marker test), else /tmp.
std::string TempBase() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

std::string MakeTempDir(const std::string& prefix) {
  std::string path = TempBase() + "/" + prefix + ".XXXXXX";
  return ::mkdtemp(path.data()) != nullptr ? path : "";
}

class DumpFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("dump_file_test");
    ASSERT_FALSE(dir_.empty()) << "mkdtemp in " << TempBase() << ": " << std::strerror(errno);
    outside_ = MakeTempDir("dump_file_outside");
    ASSERT_FALSE(outside_.empty()) << "mkdtemp in " << TempBase() << ": " << std::strerror(errno);
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "' '" + outside_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  static std::vector<uint8_t> Read(const std::string& path) {
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(ReadWholeFile(path, &bytes).ok());
    return bytes;
  }
  static JitDump ReadDump(const std::string& path) { return Parse(Read(path)); }
  static mode_t CurrentUmask() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
  }
  static std::vector<std::string> EntriesIn(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return names;
    while (const dirent* entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    return names;
  }

  std::string dir_;
  std::string outside_;
};

TEST_F(DumpFileTest, CreateWritesTheHeader) {
  DumpFile file;
  const std::string path = Path("jit-1.dump");
  ASSERT_TRUE(file.Create(path, 0600, {62, 1234, 99, 0}).ok());
  EXPECT_TRUE(file.is_open());
  EXPECT_EQ(file.size(), 40u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 40);
  const JitDump dump = ReadDump(path);
  ASSERT_TRUE(dump.header_ok);
  EXPECT_EQ(dump.header.version, 1u);
  EXPECT_EQ(dump.header.total_size, 40u);
  EXPECT_EQ(dump.header.elf_mach, 62u);
  EXPECT_EQ(dump.header.pid, 1234u);
  EXPECT_EQ(dump.header.timestamp, 99u);
  EXPECT_TRUE(dump.records.empty());
  ASSERT_TRUE(file.Close(100).ok());
}

TEST_F(DumpFileTest, PlantedSymlinkIsNotFollowedAndNothingOutsideIsTouched) {
  const std::string target = outside_ + "/victim";
  {
    std::ofstream out(target);
    out << "precious";
  }
  const std::string path = Path("jit-2.dump");
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  DumpFile file;
  const Status status = file.Create(path, 0600, {62, 2, 0, 0});
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(file.is_open());
  // The symlink is still a symlink and the target is unchanged.
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  std::ifstream in(target);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "precious");
  // A dangling symlink (target does not exist) is not followed either: nothing gets created.
  const std::string dangling_target = outside_ + "/created";
  const std::string path2 = Path("jit-3.dump");
  ASSERT_EQ(::symlink(dangling_target.c_str(), path2.c_str()), 0);
  DumpFile file2;
  EXPECT_FALSE(file2.Create(path2, 0600, {62, 3, 0, 0}).ok());
  EXPECT_NE(::access(dangling_target.c_str(), F_OK), 0);
}

TEST_F(DumpFileTest, DirectoryAtThePathIsLeftAlone) {
  const std::string path = Path("jit-4.dump");
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  DumpFile file;
  EXPECT_FALSE(file.Create(path, 0600, {62, 4, 0, 0}).ok());
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(DumpFileTest, StaleOwnFileIsReplaced) {
  const std::string path = Path("jit-5.dump");
  {
    std::ofstream out(path);
    out << std::string(1000, 'x');
  }
  DumpFile file;
  ASSERT_TRUE(file.Create(path, 0600, {62, 5, 0, 0}).ok());
  ASSERT_TRUE(file.Close(1).ok());
  const JitDump dump = ReadDump(path);
  EXPECT_EQ(dump.file_size, 56u);
  EXPECT_TRUE(Check(dump).empty());
}

TEST_F(DumpFileTest, MarkerMappingIsExecutable) {
  const std::string path = Path("jit-6.dump");
  DumpFile file;
  ASSERT_TRUE(file.Create(path, 0600, {62, 6, 0, 0}).ok());
  // perf record sees the dump only through this mapping and perf inject --jit finds it by it:
  // the check must run. Where it cannot, the test fails and says why.
  const Status status = file.MapMarker();
  struct statvfs fs {};
  const bool noexec = ::statvfs(dir_.c_str(), &fs) == 0 && (fs.f_flag & ST_NOEXEC) != 0;
  ASSERT_TRUE(status.ok()) << "cannot map " << path << " PROT_READ|PROT_EXEC: " << status.ToString()
                           << (noexec ? "; " + TempBase() + " is mounted noexec: run the test with TMPDIR set to "
                                                            "a directory on a mount that allows exec"
                                      : "");
  EXPECT_TRUE(file.marker_mapped());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    if (line.find(path) == std::string::npos) continue;
    found = true;
    // "start-end perms offset dev inode path": perms r-x (p or s)
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos);
    EXPECT_EQ(line.substr(space + 1, 3), "r-x") << line;
  }
  EXPECT_TRUE(found) << "no mapping of " << path;
  ASSERT_TRUE(file.Close(7).ok());
  EXPECT_FALSE(file.marker_mapped());
}

TEST_F(DumpFileTest, EveryRecordTypeRoundTripsThroughTheFile) {
  const std::string path = Path("jit-7.dump");
  DumpFile file;
  ASSERT_TRUE(file.Create(path, 0600, {62, 7, 1, 0}).ok());
  std::vector<uint8_t> buffer;
  auto append = [&](size_t size, auto encode) {
    buffer.assign(size, 0);
    encode(buffer.data());
    ASSERT_TRUE(file.Append(buffer.data(), buffer.size()).ok());
  };
  const uint8_t unwind_data[16] = {1};
  UnwindingInfo unwind;
  unwind.timestamp = 2;
  unwind.eh_frame_hdr_size = 8;
  unwind.unwind_data = unwind_data;
  append(UnwindingInfoSize(unwind), [&](uint8_t* o) { return EncodeUnwindingInfo(unwind, o); });
  const DebugEntry entries[] = {{0x7000, 10, 0, "W.java"}, {0x7004, 11, 0, "W.java"}};
  append(DebugInfoSize(entries), [&](uint8_t* o) { return EncodeDebugInfo(3, 0x7000, entries, o); });
  const std::string_view files[] = {"W.java"};
  const std::string_view names[] = {"W.run", "W.helper"};
  const SamplyFunctionRecord functions[] = {{0, 0, 9, 0, 0}, {1, 0, 20, 0, 0}};
  const SamplyInlineCallRecord calls[] = {{0, 1, 1, 11, 0}};
  const SamplyRangeRecord ranges[] = {{4, 8}};
  const SamplyLineRecord lines[] = {{0, 0, 10, 0}, {4, 0, 21, 0}, {12, 0, 11, 0}};
  InlineDebugInfo inl;
  inl.timestamp = 3;
  inl.files = files;
  inl.function_names = names;
  inl.functions = functions;
  inl.calls = calls;
  inl.ranges = ranges;
  inl.lines = lines;
  append(InlineDebugInfoSize(inl), [&](uint8_t* o) { return EncodeInlineDebugInfo(inl, o); });
  CodeLoad load;
  load.timestamp = 4;
  load.pid = 7;
  load.tid = 8;
  load.vma = 0x7000;
  load.code_addr = 0x7000;
  load.code_size = 16;
  load.code_index = 0;
  load.name = "W.run";
  append(CodeLoadSize(load), [&](uint8_t* o) { return EncodeCodeLoad(load, o); });
  CodeMove move;
  move.timestamp = 5;
  move.old_code_addr = 0x7000;
  move.new_code_addr = 0x8000;
  move.code_size = 16;
  move.code_index = 0;
  // Two iovecs for one record: Append takes the record in pieces.
  std::vector<uint8_t> move_bytes(CodeMoveSize());
  EncodeCodeMove(move, move_bytes.data());
  struct iovec iov[2] = {{move_bytes.data(), 10}, {move_bytes.data() + 10, move_bytes.size() - 10}};
  ASSERT_TRUE(file.Append(iov, 2).ok());
  ASSERT_TRUE(file.Close(6).ok());
  EXPECT_FALSE(file.is_open());
  EXPECT_TRUE(file.Close(7).ok());  // twice is fine

  const JitDump dump = ReadDump(path);
  EXPECT_TRUE(Check(dump).empty()) << (Check(dump).empty() ? "" : FormatProblem(Check(dump)[0]));
  ASSERT_EQ(dump.records.size(), 6u);
  EXPECT_NE(dump.records[0].unwinding(), nullptr);
  EXPECT_EQ(dump.records[1].debug_info()->entries.size(), 2u);
  EXPECT_EQ(dump.records[2].inline_info()->function_names[1], "W.helper");
  EXPECT_EQ(dump.records[3].load()->name, "W.run");
  EXPECT_EQ(dump.records[3].load()->tid, 8u);
  EXPECT_EQ(dump.records[4].move()->new_code_addr, 0x8000u);
  // Close wrote CODE_CLOSE last.
  EXPECT_EQ(dump.records[5].id, static_cast<uint32_t>(RecordType::kCodeClose));
  EXPECT_EQ(dump.records[5].timestamp, 6u);
  EXPECT_EQ(dump.file_size, file.size());
}

TEST_F(DumpFileTest, FailedAppendNeverLeavesATornRecord) {
  const std::string path = Path("jit-8.dump");
  DumpFile file;
  ASSERT_TRUE(file.Create(path, 0600, {62, 8, 0, 0}).ok());
  std::vector<uint8_t> small(CloseSize());
  EncodeClose(1, small.data());
  ASSERT_TRUE(file.Append(small.data(), small.size()).ok());
  const uint64_t good_size = file.size();

  // Let only part of the next record fit: the kernel writes up to RLIMIT_FSIZE, then EFBIG.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved;
  limited.rlim_cur = good_size + 100;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  CodeLoad load;
  load.code_addr = 0x1000;
  load.code_size = 1000;
  load.name = "too.big";
  std::vector<uint8_t> big(CodeLoadSize(load));
  EncodeCodeLoad(load, big.data());
  const Status status = file.Append(big.data(), big.size());
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_FALSE(status.ok());
  EXPECT_EQ(file.size(), good_size);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), good_size) << "partial record left in the file";
  // The file still ends on a whole record, and later appends continue cleanly.
  ASSERT_TRUE(file.Append(small.data(), small.size()).ok());
  ASSERT_TRUE(file.Close(2).ok());
  const JitDump dump = ReadDump(path);
  EXPECT_FALSE(dump.truncated_offset.has_value());
  EXPECT_TRUE(Check(dump).empty());
  EXPECT_EQ(dump.records.size(), 3u);
}

TEST_F(DumpFileTest, AppendWithoutOpenFileFails) {
  DumpFile file;
  const uint8_t byte = 0;
  EXPECT_FALSE(file.Append(&byte, 1).ok());
  EXPECT_FALSE(file.MapMarker().ok());
  EXPECT_TRUE(file.Close(0).ok());
}

TEST(CurrentElfMachine, MatchesTheBuildArchitecture) {
#if defined(__x86_64__)
  EXPECT_EQ(CurrentElfMachine(), 62u);
#elif defined(__aarch64__)
  EXPECT_EQ(CurrentElfMachine(), 183u);
#else
  GTEST_SKIP();
#endif
}


TEST_F(DumpFileTest, CreateWithContentsOpensThePathItselfAfterTheContents) {
  const std::string path = Path("stats.json");
  const std::string json = "{\"ok\": true}";
  int fd = -1;
  ASSERT_TRUE(CreateWithContents(path, O_WRONLY | O_APPEND, 0640, json.data(), json.size(), &fd).ok());
  // The descriptor is the named file (perf's MMAP events and /proc/self/maps name it), not an
  // unnamed temporary, and nothing else was left in the directory.
  struct stat by_fd {}, by_name {};
  ASSERT_EQ(::fstat(fd, &by_fd), 0);
  ASSERT_EQ(::stat(path.c_str(), &by_name), 0);
  EXPECT_EQ(by_fd.st_ino, by_name.st_ino);
  EXPECT_EQ(by_fd.st_nlink, 1u);
  EXPECT_EQ(by_name.st_mode & 0777, 0640u & ~CurrentUmask());
  ASSERT_TRUE(WriteAll(fd, "\n", 1));
  ::close(fd);
  const std::vector<uint8_t> bytes = Read(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), json + "\n");
  EXPECT_EQ(EntriesIn(dir_), std::vector<std::string>{"stats.json"});
}

TEST_F(DumpFileTest, CreateWithContentsKeepsTheSafetyRules) {
  const std::string target = outside_ + "/victim";
  const std::string link = Path("jit-8.dump");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  int fd = -1;
  EXPECT_FALSE(CreateWithContents(link, O_RDWR, 0600, "x", 1, &fd).ok());
  EXPECT_NE(::access(target.c_str(), F_OK), 0);
  const std::string stale = Path("jit-9.dump");
  {
    std::ofstream out(stale);
    out << "stale contents, much longer than the new ones";
  }
  ASSERT_TRUE(CreateWithContents(stale, O_RDWR, 0600, "new", 3, &fd).ok());
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 3);
  ::close(fd);
  const std::vector<uint8_t> bytes = Read(stale);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "new");
  // A missing directory fails cleanly, leaving nothing behind.
  EXPECT_FALSE(CreateWithContents(Path("absent/jit-10.dump"), O_RDWR, 0600, "x", 1, &fd).ok());
}

// --- the held output directory (issue #13 items 2 and 4) ---

TEST_F(DumpFileTest, HeldDirectoryKeepsWritingWhereItWasAfterTheNameIsSwapped) {
  const std::string out = Path("out");
  HeldDirectory dir;
  ASSERT_TRUE(dir.Open(out, 0755).ok());
  // Someone renames the directory away and plants a symlink to another one in its place.
  ASSERT_EQ(::rename(out.c_str(), Path("moved").c_str()), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), out.c_str()), 0);
  DumpFile file;
  ASSERT_TRUE(file.Create(dir, "jit-5.dump", CreateRules{O_RDWR, 0600, 0}, {62, 5, 0, 0}).ok());
  int fd = -1;
  std::string temp;
  ASSERT_TRUE(CreateTemporaryAt(dir.fd(), "perf-5.map.", O_WRONLY, 0600, &fd, &temp).ok());
  EXPECT_EQ(temp.size(), std::string("perf-5.map.").size() + 12);
  ASSERT_EQ(::renameat(dir.fd(), temp.c_str(), dir.fd(), "perf-5.map"), 0);
  ::close(fd);
  ASSERT_TRUE(CreateWithContentsAt(dir.fd(), "stats.json", CreateRules{O_WRONLY, 0600, 0}, "{}", 2, &fd).ok());
  ::close(fd);
  EXPECT_TRUE(EntriesIn(outside_).empty());
  std::vector<std::string> names = EntriesIn(Path("moved"));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"jit-5.dump", "perf-5.map", "stats.json"}));
}

TEST_F(DumpFileTest, HeldDirectoryRefusesDirectoriesOthersCanRenameIn) {
  const std::string open = Path("open");
  ASSERT_EQ(::mkdir(open.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  HeldDirectory dir;
  const Status refused = dir.Open(open, 0755);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.err_no(), EPERM);
  EXPECT_EQ(dir.refused_mode(), 0777u);
  EXPECT_FALSE(dir.is_open());
  ASSERT_EQ(::chmod(open.c_str(), 01777), 0);  // sticky, as /tmp: others cannot rename our files
  EXPECT_TRUE(dir.Open(open, 0755).ok());
  if (::geteuid() == 0) {
    const std::string theirs = Path("theirs");
    ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    HeldDirectory other;
    EXPECT_FALSE(other.Open(theirs, 0755).ok());
    EXPECT_EQ(other.refused_owner(), 65534u);
  }
}

TEST_F(DumpFileTest, AFileALiveProcessHoldsIsNeverRemovedAsStale) {
  HeldDirectory dir;
  ASSERT_TRUE(dir.Open(dir_, 0755).ok());
  DumpFile first;
  ASSERT_TRUE(first.Create(dir, "jit-1.dump", CreateRules{O_RDWR, 0600, 0}, {62, 1, 0, 0}).ok());
  struct stat held {};
  ASSERT_EQ(::stat(Path("jit-1.dump").c_str(), &held), 0);
  // Another process with the same pid (another pid namespace): the first one's lock is the
  // mark of a live writer, so the name is in use. (flock locks of two open file descriptions
  // conflict within one process too, so one test process shows it.)
  DumpFile second;
  const Status status = second.Create(dir, "jit-1.dump", CreateRules{O_RDWR, 0600, 0}, {62, 1, 0, 0});
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.err_no(), kInUse);
  struct stat still {};
  ASSERT_EQ(::stat(Path("jit-1.dump").c_str(), &still), 0);
  EXPECT_EQ(still.st_ino, held.st_ino);
  // Once the first one is closed the file is a stale leftover and is replaced.
  ASSERT_TRUE(first.Close(0).ok());
  EXPECT_TRUE(second.Create(dir, "jit-1.dump", CreateRules{O_RDWR, 0600, 0}, {62, 1, 0, 0}).ok());
}

TEST_F(DumpFileTest, AFileWrittenSinceTheAgentStartedIsNotStale) {
  HeldDirectory dir;
  ASSERT_TRUE(dir.Open(dir_, 0755).ok());
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t start = static_cast<int64_t>(now.tv_sec - 5) * 1000000000;
  {
    std::ofstream out(Path("stats.json"));
    out << "{\"another JVM\": 1}";
  }
  int fd = -1;
  const Status status = CreateWithContentsAt(dir.fd(), "stats.json", CreateRules{O_WRONLY, 0600, start}, "{}", 2, &fd);
  EXPECT_EQ(status.err_no(), kInUse);
  const std::vector<uint8_t> bytes = Read(Path("stats.json"));
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "{\"another JVM\": 1}");
}

TEST_F(DumpFileTest, DiscardRemovesOnlyItsOwnFile) {
  HeldDirectory dir;
  ASSERT_TRUE(dir.Open(dir_, 0755).ok());
  DumpFile file;
  ASSERT_TRUE(file.Create(dir, "jit-3.dump", CreateRules{O_RDWR, 0600, 0}, {62, 3, 0, 0}).ok());
  file.Discard();
  EXPECT_TRUE(EntriesIn(dir_).empty());
  EXPECT_FALSE(file.is_open());
}

}  // namespace
}  // namespace jitdump
