// jitdump strip-inline: moving samply inline records into DUMP.inline.
#include "jitdump/tool/strip_inline.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "jitdump/write/encoder.h"
#include "jitdump/format/dump_format.h"
#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/decoder.h"
#include "jitdump/tool/cli.h"

namespace jitdump::tool {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Header() {
  FileHeaderFields fields;
  fields.elf_mach = 62;
  fields.pid = 4242;
  fields.timestamp = 100;
  const FileHeader h = MakeFileHeader(fields);
  Bytes out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

Bytes Load(uint64_t addr, uint64_t index, const char* name) {
  CodeLoad load;
  load.timestamp = 200 + index;
  load.pid = 4242;
  load.tid = 7;
  load.vma = load.code_addr = addr;
  load.code_size = 16;
  load.code_index = index;
  load.name = name;
  Bytes out(CodeLoadSize(load));
  EncodeCodeLoad(load, out.data());
  return out;
}

Bytes Debug(uint64_t addr) {
  const DebugEntry entries[] = {{addr, 10, 0, "A.java"}, {addr + 8, 11, 0, "A.java"}};
  Bytes out(DebugInfoSize(entries));
  EncodeDebugInfo(150, addr, entries, out.data());
  return out;
}

Bytes Inline(uint32_t line) {
  static const std::string_view files[] = {"A.java"};
  static const std::string_view names[] = {"A.a", "A.b"};
  static const SamplyFunctionRecord functions[] = {{0, 0, 10, 0, 0}, {1, 0, 20, 0, 0}};
  const SamplyInlineCallRecord calls[] = {{0, 1, 1, line, 0}};
  const SamplyRangeRecord ranges[] = {{4, 8}};
  const SamplyLineRecord lines[] = {{0, 0, 10, 0}, {4, 0, 20, 0}};
  InlineDebugInfo info;
  info.timestamp = 150;
  info.files = files;
  info.function_names = names;
  info.functions = functions;
  info.calls = calls;
  info.ranges = ranges;
  info.lines = lines;
  Bytes out(InlineDebugInfoSize(info));
  EncodeInlineDebugInfo(info, out.data());
  return out;
}

Bytes Move(uint64_t from, uint64_t to, uint64_t index) {
  CodeMove move;
  move.timestamp = 300;
  move.pid = 4242;
  move.old_code_addr = from;
  move.new_code_addr = move.vma = to;
  move.code_size = 16;
  move.code_index = index;
  Bytes out(CodeMoveSize());
  EncodeCodeMove(move, out.data());
  return out;
}

Bytes Close() {
  Bytes out(CloseSize());
  EncodeClose(400, out.data());
  return out;
}

Bytes Unknown() {
  Bytes out(24, 0xab);
  const RecordHeader h{12345, 24, 250};
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

size_t Errors(const Bytes& data) {
  size_t errors = 0;
  for (const Problem& p : Check(Parse(data))) errors += p.severity == Severity::kError;
  return errors;
}

TEST(SplitInlineTest, MovesInlineRecordsWithCopiesOfTheirLoads) {
  const Bytes dump = Cat({Header(), Debug(0x1000), Inline(11), Load(0x1000, 1, "A.a"), Load(0x2000, 2, "stub"),
                          Inline(12), Load(0x3000, 3, "A.c"), Unknown(), Move(0x3000, 0x4000, 3), Close()});
  ASSERT_EQ(Errors(dump), 0u);
  Bytes stripped, sidecar;
  StripInlineResult result;
  std::string error;
  ASSERT_EQ(SplitInline(dump, &stripped, &sidecar, &result, &error), StripStatus::kOk) << error;
  EXPECT_EQ(stripped, Cat({Header(), Debug(0x1000), Load(0x1000, 1, "A.a"), Load(0x2000, 2, "stub"),
                           Load(0x3000, 3, "A.c"), Unknown(), Move(0x3000, 0x4000, 3), Close()}));
  EXPECT_EQ(sidecar, Cat({Header(), Inline(11), Load(0x1000, 1, "A.a"), Inline(12), Load(0x3000, 3, "A.c")}));
  EXPECT_EQ(result.inline_records, 2u);
  EXPECT_EQ(result.loads_copied, 2u);
  EXPECT_EQ(result.orphan_records, 0u);
  EXPECT_TRUE(result.closed);
  EXPECT_EQ(result.bytes_before, dump.size());
  EXPECT_EQ(result.bytes_after, stripped.size());
  EXPECT_EQ(result.sidecar_bytes, sidecar.size());
  EXPECT_EQ(Errors(stripped), 0u);
  EXPECT_EQ(Errors(sidecar), 0u);
  // The sidecar still tells samply which code each inline record describes.
  const JitDump side = Parse(sidecar);
  size_t with_inline = 0;
  for (const Record& r : side.records) {
    if (const LoadBody* load = r.load()) with_inline += load->inline_info >= 0;
  }
  EXPECT_EQ(with_inline, 2u);
}

TEST(SplitInlineTest, NothingToDo) {
  const Bytes dump = Cat({Header(), Debug(0x1000), Load(0x1000, 1, "A.a"), Close()});
  Bytes stripped, sidecar;
  StripInlineResult result;
  std::string error;
  EXPECT_EQ(SplitInline(dump, &stripped, &sidecar, &result, &error), StripStatus::kNothingToDo);
  EXPECT_TRUE(stripped.empty());
  EXPECT_TRUE(sidecar.empty());
}

TEST(SplitInlineTest, OrphanAndTruncatedTailAndUnclosed) {
  // A killed JVM: an inline record whose load never came, then half a record.
  const Bytes whole = Load(0x5000, 5, "A.x");
  const Bytes half(whole.begin(), whole.begin() + 30);
  const Bytes dump = Cat({Header(), Inline(11), Load(0x1000, 1, "A.a"), Inline(12), half});
  Bytes stripped, sidecar;
  StripInlineResult result;
  std::string error;
  ASSERT_EQ(SplitInline(dump, &stripped, &sidecar, &result, &error), StripStatus::kOk);
  EXPECT_FALSE(result.closed);
  EXPECT_EQ(result.inline_records, 1u);
  EXPECT_EQ(result.orphan_records, 1u);
  EXPECT_EQ(stripped, Cat({Header(), Load(0x1000, 1, "A.a"), half}));  // the tail kept as it was
  EXPECT_EQ(sidecar, Cat({Header(), Inline(11), Load(0x1000, 1, "A.a")}));
}

TEST(SplitInlineTest, Invalid) {
  const Bytes junk(64, 0x55);
  Bytes stripped, sidecar;
  StripInlineResult result;
  std::string error;
  EXPECT_EQ(SplitInline(junk, &stripped, &sidecar, &result, &error), StripStatus::kInvalid);
  EXPECT_NE(error, "");
}

class StripInlineFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/strip_inline_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/jit-4242.dump";
  }
  void TearDown() override {
    for (const char* suffix : {"", ".inline"}) ::unlink((path_ + suffix).c_str());
    ::rmdir(dir_.c_str());  // fails (and shows) if a temporary file was left behind
  }
  void Write(const Bytes& data, mode_t mode) {
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), data.size());
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }
  static Bytes Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static mode_t Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  std::string dir_, path_;
};

TEST_F(StripInlineFileTest, RewritesDumpAndWritesSidecar) {
  const Bytes dump = Cat({Header(), Debug(0x1000), Inline(11), Load(0x1000, 1, "A.a"), Close()});
  Write(dump, 0640);
  StripInlineResult result;
  std::string error;
  ASSERT_EQ(StripInline(path_, {}, &result, &error), StripStatus::kOk) << error;
  EXPECT_EQ(Read(path_), Cat({Header(), Debug(0x1000), Load(0x1000, 1, "A.a"), Close()}));
  EXPECT_EQ(Read(path_ + ".inline"), Cat({Header(), Inline(11), Load(0x1000, 1, "A.a")}));
  EXPECT_EQ(Mode(path_), 0640u);
  EXPECT_EQ(Mode(path_ + ".inline"), 0640u);

  // Again: nothing left to strip, both files untouched.
  ASSERT_EQ(StripInline(path_, {}, &result, &error), StripStatus::kNothingToDo);
  EXPECT_EQ(Read(path_ + ".inline"), Cat({Header(), Inline(11), Load(0x1000, 1, "A.a")}));
}

TEST_F(StripInlineFileTest, RefusesUnclosedUnlessForced) {
  const Bytes dump = Cat({Header(), Inline(11), Load(0x1000, 1, "A.a")});
  Write(dump, 0600);
  StripInlineResult result;
  std::string error;
  EXPECT_EQ(StripInline(path_, {}, &result, &error), StripStatus::kNotClosed);
  EXPECT_NE(error.find("JIT_CODE_CLOSE"), std::string::npos);
  EXPECT_EQ(Read(path_), dump);
  EXPECT_NE(::access((path_ + ".inline").c_str(), F_OK), 0);
  ASSERT_EQ(StripInline(path_, StripInlineOptions{true}, &result, &error), StripStatus::kOk) << error;
  EXPECT_EQ(Read(path_), Cat({Header(), Load(0x1000, 1, "A.a")}));
}

TEST_F(StripInlineFileTest, ReplacesASymlinkedSidecarInsteadOfFollowingIt) {
  const std::string target = dir_ + "/elsewhere";
  std::ofstream(target) << "keep";
  ASSERT_EQ(::symlink(target.c_str(), (path_ + ".inline").c_str()), 0);
  Write(Cat({Header(), Inline(11), Load(0x1000, 1, "A.a"), Close()}), 0600);
  StripInlineResult result;
  std::string error;
  ASSERT_EQ(StripInline(path_, {}, &result, &error), StripStatus::kOk) << error;
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep");
  struct stat st {};
  ASSERT_EQ(::lstat((path_ + ".inline").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ::unlink(target.c_str());
}

TEST_F(StripInlineFileTest, MissingFileIsAnIoError) {
  StripInlineResult result;
  std::string error;
  EXPECT_EQ(StripInline(dir_ + "/nope.dump", {}, &result, &error), StripStatus::kIoError);
}

TEST_F(StripInlineFileTest, CommandLine) {
  Write(Cat({Header(), Inline(11), Load(0x1000, 1, "A.a"), Close()}), 0600);
  auto run = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return Main(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run({"jitdump", "strip-inline"}), 2);
  EXPECT_EQ(run({"jitdump", "strip-inline", "--bogus", path_}), 2);
  EXPECT_EQ(run({"jitdump", "strip-inline", "--help"}), 0);
  EXPECT_EQ(run({"jitdump", "strip-inline", dir_ + "/nope.dump"}), 2);
  EXPECT_EQ(run({"jitdump", "strip-inline", "--json", path_}), 0);
  EXPECT_EQ(Read(path_), Cat({Header(), Load(0x1000, 1, "A.a"), Close()}));
  EXPECT_EQ(run({"jitdump", "strip-inline", path_}), 0);  // nothing to do
  const std::string junk = dir_ + "/junk.dump";
  std::ofstream(junk) << "not a jitdump at all, not at all";
  EXPECT_EQ(run({"jitdump", "strip-inline", junk}), 1);
  ::unlink(junk.c_str());
}

}  // namespace
}  // namespace jitdump::tool
