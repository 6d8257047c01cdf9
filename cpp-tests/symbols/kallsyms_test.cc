// Kernel symbols: kallsyms read the way perf 6.1 reads it, the kernel's build id from its
// notes, and the Symbolizer's choice between this machine's kallsyms, perf's cached copy and
// none (with KASLR relocation against the recording's _text).
#include "jitdump/symbols/kallsyms.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "jitdump/symbols/symbolizer.h"

namespace jitdump::symbols {
namespace {

namespace fs = std::filesystem;

const char kKallsyms[] =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81000040 t local_text\n"
    "ffffffff81000080 W weak_fn\n"
    "ffffffff810000c0 r some_rodata\n"  // read-only data: perf keeps none
    "ffffffff81000100 T do_syscall_64\n"
    "ffffffff81000200 D some_data\n"
    "ffffffffc0001000 t ext4_fn\t[ext4]\n"
    "ffffffffc0001080 t ext4_other\t[ext4]\n"
    "not a line\n";

TEST(KallsymsTest, KeepsTextWeakDataAndBssLikePerf) {
  Kallsyms k;
  std::string error;
  ASSERT_TRUE(ParseKallsyms(kKallsyms, &k, &error)) << error;
  EXPECT_EQ(k.text, 0xffffffff81000000u);
  EXPECT_FALSE(k.hidden);
  auto name = [&](uint64_t a) {
    const SymbolTable::Symbol* s = k.table.Find(a);
    return s != nullptr ? std::string(k.table.Name(*s)) : "(none)";
  };
  EXPECT_EQ(name(0xffffffff81000050), "local_text");
  EXPECT_EQ(name(0xffffffff810000c8), "weak_fn");  // "r" is not a symbol perf keeps
  EXPECT_EQ(name(0xffffffff81000100), "do_syscall_64");
  EXPECT_EQ(name(0xffffffffc0001004), "ext4_fn");  // without the module
  EXPECT_EQ(k.ModuleAt(0xffffffffc0001004), "[ext4]");
  EXPECT_EQ(k.ModuleAt(0xffffffff81000100), "");
  // _stext and _text start together: the first gets no size from the fix-up (it ends where
  // _text starts), so the sized _text stays (perf names kernel entry code "_text" too).
  EXPECT_EQ(name(0xffffffff81000000), "_text");
}

TEST(KallsymsTest, AllZeroAddressesMeanHidden) {
  Kallsyms k;
  std::string error;
  EXPECT_FALSE(ParseKallsyms("0000000000000000 T _text\n0000000000000000 T foo\n", &k, &error));
  EXPECT_TRUE(k.hidden);
  EXPECT_NE(error.find("kptr_restrict"), std::string::npos) << error;
}

std::vector<uint8_t> Note(const std::vector<uint8_t>& id, uint32_t type = 3) {
  std::vector<uint8_t> note;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) note.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u32(4);
  u32(static_cast<uint32_t>(id.size()));
  u32(type);
  for (char c : std::string("GNU", 4)) note.push_back(static_cast<uint8_t>(c));
  note.insert(note.end(), id.begin(), id.end());
  while (note.size() % 4 != 0) note.push_back(0);
  return note;
}

TEST(KallsymsTest, NotesBuildIdSkipsOtherNotes) {
  const std::vector<uint8_t> id = {1, 2, 3, 4, 5};
  std::vector<uint8_t> notes = Note({9, 9, 9}, /*type=*/1);
  const std::vector<uint8_t> gnu = Note(id);
  notes.insert(notes.end(), gnu.begin(), gnu.end());
  EXPECT_EQ(ParseNotesBuildId(notes), id);
  notes.resize(notes.size() - 6);  // cut inside the build id
  EXPECT_TRUE(ParseNotesBuildId(notes).empty());
}

class KernelLookupTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("jdtest-kallsyms-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Write(dir_ / "kallsyms", kKallsyms);
    const std::vector<uint8_t> notes = Note(host_id_);
    Write(dir_ / "notes", std::string(notes.begin(), notes.end()));
    options_.kallsyms = (dir_ / "kallsyms").string();
    options_.kernel_notes = (dir_ / "notes").string();
    options_.buildid_dir = (dir_ / "cache").string();
    options_.os_release = "6.1.0-test";
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string NameAt(Symbolizer& s, uint64_t address) {
    const Lookup l = s.FindKernel(address);
    return std::string(l.frames.back().function);
  }

  fs::path dir_;
  Options options_;
  std::vector<uint8_t> host_id_ = {0xaa, 0xbb, 0xcc, 0xdd};
};

TEST_F(KernelLookupTest, SameKernelOtherBootIsRelocated) {
  Symbolizer s(options_);
  // Recorded on this kernel in a boot whose _text was 0x200000 lower (KASLR).
  s.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test"});
  EXPECT_EQ(NameAt(s, 0xffffffff80e00100), "do_syscall_64");
  const Lookup l = s.FindKernel(0xffffffff80e00104);
  EXPECT_EQ(l.outcome, Outcome::kSymbol);
  EXPECT_EQ(l.frames.back().offset, 4u);
  const std::vector<FileReport> files = s.Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].found_how, "kallsyms");
  EXPECT_EQ(files[0].lookups, 2u);
}

TEST_F(KernelLookupTest, AnotherKernelUsesPerfsCachedCopyElseNothing) {
  const std::vector<uint8_t> other = {0x11, 0x22};
  {
    Symbolizer s(options_);
    s.SetRecordingKernel({other, 0xffffffff81000000, "6.1.0-other"});
    const Lookup l = s.FindKernel(0xffffffff81000100);
    EXPECT_EQ(l.outcome, Outcome::kKernelUnavailable);
    EXPECT_EQ(l.frames.back().function, "");
    EXPECT_EQ(l.frames.back().offset, 0xffffffff81000100u);
    EXPECT_NE(s.Files()[0].problem.find("build id 1122"), std::string::npos) << s.Files()[0].problem;
  }
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "1122" / "kallsyms", "ffffffff81000000 T _text\nffffffff81000100 T cached_fn\n");
  Symbolizer s(options_);
  s.SetRecordingKernel({other, 0xffffffff81000000, "6.1.0-other"});
  EXPECT_EQ(NameAt(s, 0xffffffff81000100), "cached_fn");
  EXPECT_EQ(s.Files()[0].found_how, "kallsyms-cache");
}

TEST_F(KernelLookupTest, WithoutBuildIdTheReleaseDecides) {
  Symbolizer same(options_);
  same.SetRecordingKernel({{}, 0, "6.1.0-test"});
  EXPECT_EQ(NameAt(same, 0xffffffff81000100), "do_syscall_64");
  Symbolizer other(options_);
  other.SetRecordingKernel({{}, 0, "5.10.0-old"});
  EXPECT_EQ(other.FindKernel(0xffffffff81000100).outcome, Outcome::kKernelUnavailable);
}

}  // namespace
}  // namespace jitdump::symbols
