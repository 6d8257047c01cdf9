// Kernel symbols: kallsyms read the way perf 6.1 reads it, the kernel's build id from its
// notes, and the Symbolizer's choice between this machine's kallsyms, perf's cached copy and
// none (with KASLR relocation against the recording's _text).
#include "jitdump/symbols/kallsyms.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
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

// ---- A read filtered by the addresses asked for names each of them as the whole table does ----

// What a table says of `address` (in the file's addresses): symbol, its start and end, module.
std::string Answer(const Kallsyms& k, uint64_t address) {
  const SymbolTable::Symbol* s = k.table.Find(address);
  std::ostringstream out;
  out << std::hex;
  if (s == nullptr) {
    out << "(none)";
  } else {
    out << k.table.Name(*s) << " [" << s->start << ", " << s->end << ")";
  }
  out << " module " << k.ModuleAt(address);
  return out.str();
}

// Parses `text` whole and filtered by `recorded` (recorded addresses; the recording's _text
// `recorded_text`), and expects the same answer for each. Returns the filtered read.
Kallsyms ExpectFilteredAnswersAsWhole(const std::string& text, std::vector<uint64_t> recorded,
                                      uint64_t recorded_text = 0) {
  std::sort(recorded.begin(), recorded.end());
  recorded.erase(std::unique(recorded.begin(), recorded.end()), recorded.end());
  Kallsyms whole;
  Kallsyms filtered;
  std::string error;
  const bool whole_ok = ParseKallsyms(text, &whole, &error);
  const KallsymsWanted wanted{recorded, recorded_text};
  const bool filtered_ok = ParseKallsyms(text, &filtered, &error, &wanted);
  EXPECT_EQ(whole_ok, filtered_ok) << error;
  if (!whole_ok || !filtered_ok) return filtered;
  EXPECT_EQ(whole.symbols, filtered.symbols);
  EXPECT_EQ(whole.text, filtered.text);
  if (filtered.needs_full_read) return filtered;
  const uint64_t delta = recorded_text != 0 && whole.text != 0 ? whole.text - recorded_text : 0;
  for (uint64_t a : recorded) EXPECT_EQ(Answer(filtered, a + delta), Answer(whole, a + delta)) << std::hex << a;
  return filtered;
}

TEST(KallsymsFilterTest, KeepsWhatNamesTheWantedAddresses) {
  const std::vector<uint64_t> wanted = {0xffffffff81000050, 0xffffffff81000100, 0xffffffff81000104,
                                        0xffffffffc0001004, 0xffffffffc0001090, 0xffffffff80000000,
                                        0xffffffff810000c8, 0xffffffff81000000};
  const Kallsyms k = ExpectFilteredAnswersAsWhole(kKallsyms, wanted);
  EXPECT_TRUE(k.filtered);
  EXPECT_FALSE(k.needs_full_read);
  Kallsyms whole;
  std::string error;
  ASSERT_TRUE(ParseKallsyms(kKallsyms, &whole, &error));
  EXPECT_LT(k.table.size(), whole.table.size());  // some_data names none of them
}

TEST(KallsymsFilterTest, RelocatedDuplicatedAndUnsorted) {
  // _text after other symbols, duplicates apart from each other, a module's symbols out of
  // order, kernel symbols out of order after them.
  const std::string text =
      "ffffffff81000300 T third\n"
      "ffffffff81000000 T _text\n"
      "ffffffff81000100 t first_alias\n"
      "ffffffff81000200 T second\n"
      "ffffffffc0002080 t mod_b\t[mod]\n"
      "ffffffffc0002000 t mod_a\t[mod]\n"
      "ffffffffc0002040 t mod_dup\t[mod]\n"
      "ffffffffc0002040 T mod_dup2\t[mod]\n"
      "ffffffff81000100 T first\n"
      "ffffffff81000180 W weak_between\n"
      "ffffffff81000400 T last_kernel\n";
  // Recorded in a boot whose _text was 0x1000000 lower.
  const uint64_t recorded_text = 0xffffffff80000000;
  std::vector<uint64_t> recorded;
  for (uint64_t a = 0xffffffff80000000 - 0x10; a < 0xffffffff80000500; a += 0x10) recorded.push_back(a);
  for (uint64_t a = 0xffffffffbf002000 - 0x10; a < 0xffffffffbf003100; a += 0x20) recorded.push_back(a);
  ExpectFilteredAnswersAsWhole(text, recorded, recorded_text);
  // One address at a time: each read keeps a different few symbols.
  for (uint64_t a : recorded) ExpectFilteredAnswersAsWhole(text, {a}, recorded_text);
}

TEST(KallsymsFilterTest, OverlapsReadTheWholeFile) {
  // A module symbol within a page of the kernel's last one: the kernel symbol's end is rounded
  // past the module's start, and which one perf names there depends on its tree of all symbols.
  const std::string text =
      "ffffffff81000000 T _text\n"
      "ffffffff81000100 T kernel_fn\n"
      "ffffffff81000200 t mod_fn\t[mod]\n";
  const Kallsyms k = ExpectFilteredAnswersAsWhole(text, {0xffffffff81000100});
  EXPECT_TRUE(k.needs_full_read);
}

TEST(KallsymsFilterTest, ASymbolInTheLastPageOfTheAddressSpaceNamesNothingEither) {
  // perf's end for a file's last symbol, a page past its start rounded up to a page, wraps
  // here to below the start: perf names nothing there, and neither read may (found by the
  // symbols fuzzer: the filtered read took the wrapped end for no size, a symbol covering its
  // start).
  const std::string text =
      "ffffffff81000000 T _text\n"
      "fffffffffffff810 t top\n";
  Kallsyms whole;
  std::string error;
  ASSERT_TRUE(ParseKallsyms(text, &whole, &error)) << error;
  EXPECT_EQ(whole.table.Find(0xfffffffffffff810), nullptr);
  const Kallsyms k = ExpectFilteredAnswersAsWhole(text, {0xfffffffffffff810, 0xfffffffffffff811, 0xffffffff81000000});
  EXPECT_TRUE(k.filtered);
  EXPECT_FALSE(k.needs_full_read);
}

TEST(KallsymsFilterTest, RandomFilesAndAddresses) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 300; ++round) {
    // Symbols at a few hundred distinct starts (many shared), in a shuffled order or in order,
    // some a module's, some of types perf drops.
    const uint64_t base = 0xffffffff81000000;
    std::vector<std::string> lines;
    const int n = 1 + static_cast<int>(random() % 300);
    for (int i = 0; i < n; ++i) {
      const bool module = random() % 8 == 0;
      const uint64_t start = (module ? 0xffffffffc0000000 : base) + (random() % 200) * 0x40 + (random() % 3) * 0x1000;
      const char types[] = "TtWwDdBbr";
      std::ostringstream line;
      line << std::hex << start << ' ' << types[random() % 9] << " sym" << std::dec << i;
      if (random() % 4 == 0) line << "_longer_name";
      if (module) line << "\t[m" << random() % 3 << ']';
      lines.push_back(line.str());
    }
    if (random() % 2 == 0) std::sort(lines.begin(), lines.end());
    std::string text = "ffffffff81000000 T _text\n";
    for (const std::string& line : lines) text += line + "\n";
    std::vector<uint64_t> wanted;
    const int m = static_cast<int>(random() % 20);
    for (int i = 0; i < m; ++i) {
      const uint64_t region = random() % 4 == 0 ? 0xffffffffc0000000 : base;
      wanted.push_back(region - 0x100 + random() % 0x4000);
    }
    ExpectFilteredAnswersAsWhole(text, wanted);
  }
}

TEST(KallsymsFilterTest, ThisMachinesKallsyms) {
  std::ifstream in("/proc/kallsyms");
  std::stringstream text;
  text << in.rdbuf();
  Kallsyms whole;
  std::string error;
  // The fast tier runs without root (docs/testing.md), where the kernel hides the addresses: the
  // random files above check the same rules there; scripts/test (root) runs this one.
  if (!ParseKallsyms(text.str(), &whole, &error)) GTEST_SKIP() << "/proc/kallsyms: " << error;
  // Every symbol's start, the byte before it and one inside, and random addresses.
  std::vector<uint64_t> wanted;
  std::mt19937_64 random(11);
  const std::vector<SymbolTable::Symbol>& symbols = whole.table.symbols();
  for (size_t i = 0; i < symbols.size(); i += 1 + random() % 40) {
    wanted.push_back(symbols[i].start);
    wanted.push_back(symbols[i].start - 1);
    wanted.push_back(symbols[i].start + (symbols[i].end - symbols[i].start) / 2);
  }
  const Kallsyms k = ExpectFilteredAnswersAsWhole(text.str(), wanted);
  EXPECT_TRUE(k.filtered || k.needs_full_read);
  if (k.filtered) {
    EXPECT_LT(k.table.size(), whole.table.size());
  }
}

// ReadKallsyms streams a file through a buffer: the names of symbols still undecided when the
// buffer moves on (a read ends after their line) are kept as well as the ones decided at once.
// A file of several buffers, every symbol asked for, pairs of symbols at one start (decided
// only at the next start), an overlong line, answers compared with the whole text parsed at once.
TEST(KallsymsFilterTest, StreamedReadMatchesTheTextParsedAtOnce) {
  std::mt19937_64 random(5);
  std::string text = "ffffffff81000000 T _text\n";
  std::vector<uint64_t> wanted;
  uint64_t start = 0xffffffff81000000;
  for (int i = 0; i < 40000; ++i) {
    start += 0x10 * (1 + random() % 4);
    std::ostringstream line;
    line << std::hex << start << " T fn" << std::dec << i << '_' << std::string(random() % 40, 'x') << '\n';
    if (random() % 3 == 0) line << std::hex << start << " t alias" << std::dec << i << '\n';
    if (i == 20000) line << std::hex << start + 1 << " T " << std::string(5000, 'L') << '\n';
    text += line.str();
    wanted.push_back(start);
    wanted.push_back(start + 3);
  }
  ASSERT_GT(text.size(), 1u << 20);  // several of its 256 KiB reads
  const fs::path path = fs::temp_directory_path() / ("jdtest-kallsyms-stream-" + std::to_string(getpid()));
  std::ofstream(path, std::ios::binary) << text;
  const KallsymsWanted want{wanted, 0};
  Kallsyms parsed;
  Kallsyms streamed;
  std::string error;
  ASSERT_TRUE(ParseKallsyms(text, &parsed, &error, &want)) << error;
  ASSERT_TRUE(ReadKallsyms(path.string(), &streamed, &error, &want)) << error;
  fs::remove(path);
  ASSERT_TRUE(streamed.filtered);
  EXPECT_EQ(streamed.table.size(), parsed.table.size());
  for (uint64_t a : wanted) ASSERT_EQ(Answer(streamed, a), Answer(parsed, a)) << std::hex << a;
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

// perf record's copy of this kernel's kallsyms, made in another boot (its _text 0x200000
// lower), where ext4 was loaded elsewhere.
std::string CopyFromAnotherBoot(bool hidden = false) {
  std::string copy =
      "ffffffff80e00000 T _stext\n"
      "ffffffff80e00000 T _text\n"
      "ffffffff80e00040 t local_text\n"
      "ffffffff80e00080 W weak_fn\n"
      "ffffffff80e00100 T do_syscall_64\n"
      "ffffffff80e00200 D some_data\n"
      "ffffffffc0005000 t ext4_fn\t[ext4]\n";
  if (hidden) {
    for (size_t line = 0; line < copy.size(); line = copy.find('\n', line) + 1) copy.replace(line, 16, 16, '0');
  }
  return copy;
}

TEST_F(KernelLookupTest, ImageAddressesOfThisKernelAreNamedFromPerfsCopy) {
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "aabbccdd" / "kallsyms", CopyFromAnotherBoot());
  Symbolizer s(options_);
  // Recorded in the copy's boot, reported in this one.
  s.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test"});
  s.WantKernel({0xffffffff80e00104, 0xffffffff80e00044});
  const Lookup l = s.FindKernel(0xffffffff80e00104);
  EXPECT_EQ(l.frames.back().function, "do_syscall_64");
  EXPECT_EQ(l.frames.back().offset, 4u);
  EXPECT_EQ(NameAt(s, 0xffffffff80e00044), "local_text");
  EXPECT_EQ(s.Files()[0].found_how, "kallsyms-cache");
  EXPECT_EQ(s.Files()[0].problem, "");
}

TEST_F(KernelLookupTest, AnAddressOutsideTheImageReadsThisKernelsKallsyms) {
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "aabbccdd" / "kallsyms", CopyFromAnotherBoot());
  // A module's address (modules load where each boot puts them), past the image's last symbol,
  // before its _text: each is named from /proc/kallsyms, as perf names it.
  for (const uint64_t outside : {uint64_t{0xffffffffc0005004}, uint64_t{0xffffffff80e00204}, uint64_t{0xffffffff80d00000}}) {
    Symbolizer s(options_);
    s.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test"});
    s.WantKernel({0xffffffff80e00104, outside});
    EXPECT_EQ(NameAt(s, 0xffffffff80e00104), "do_syscall_64");
    EXPECT_EQ(s.Files()[0].found_how, "kallsyms") << std::hex << outside;
  }
}

TEST_F(KernelLookupTest, AnAddressPastTheRecordedKernelMapReadsThisKernelsKallsyms) {
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "aabbccdd" / "kallsyms", CopyFromAnotherBoot());
  Symbolizer s(options_);
  // The recording mapped the kernel up to 0x...140: an address past it is not the image's
  // text, whatever the copy's symbols say, and the copy is not read.
  s.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test", 0xffffffff80e00140});
  s.WantKernel({0xffffffff80e00104, 0xffffffff80e00150});
  EXPECT_EQ(NameAt(s, 0xffffffff80e00104), "do_syscall_64");
  EXPECT_EQ(s.Files()[0].found_how, "kallsyms");
  Symbolizer within(options_);
  within.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test", 0xffffffff80e00140});
  within.WantKernel({0xffffffff80e00104});
  EXPECT_EQ(NameAt(within, 0xffffffff80e00104), "do_syscall_64");
  EXPECT_EQ(within.Files()[0].found_how, "kallsyms-cache");
}

TEST_F(KernelLookupTest, AHiddenCopyOrARecordingWithoutItsTextReadsThisKernelsKallsyms) {
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "aabbccdd" / "kallsyms", CopyFromAnotherBoot(/*hidden=*/true));
  {
    Symbolizer s(options_);
    s.SetRecordingKernel({host_id_, 0xffffffff80e00000, "6.1.0-test"});
    s.WantKernel({0xffffffff80e00104});
    EXPECT_EQ(NameAt(s, 0xffffffff80e00104), "do_syscall_64");
    EXPECT_EQ(s.Files()[0].found_how, "kallsyms");
  }
  Write(dir_ / "cache" / "[kernel.kallsyms]" / "aabbccdd" / "kallsyms", CopyFromAnotherBoot());
  Symbolizer s(options_);
  // Without the recording's _text the copy's boot cannot be told from this one.
  s.SetRecordingKernel({host_id_, 0, "6.1.0-test"});
  s.WantKernel({0xffffffff81000104});
  EXPECT_EQ(NameAt(s, 0xffffffff81000104), "do_syscall_64");
  EXPECT_EQ(s.Files()[0].found_how, "kallsyms");
}

TEST_F(KernelLookupTest, AnAddressNotWantedReadsTheWholeFile) {
  Symbolizer s(options_);
  s.SetRecordingKernel({host_id_, 0xffffffff81000000, "6.1.0-test"});
  s.WantKernel({0xffffffff81000104});
  EXPECT_EQ(NameAt(s, 0xffffffff81000104), "do_syscall_64");
  // Not asked for: the filtered table may hold nothing at or before it but do_syscall_64.
  EXPECT_EQ(NameAt(s, 0xffffffff81000050), "local_text");
  EXPECT_EQ(NameAt(s, 0xffffffff810000c8), "weak_fn");
  EXPECT_EQ(NameAt(s, 0xffffffff81000104), "do_syscall_64");
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
