// The Symbolizer on real ELF files: the fixture program (PIE and not) prints the run-time
// addresses of known functions and its mappings; the tests name those addresses through the
// mappings, in the library as built and in copies laid out as systems ship them
// (fixtures/make_fixtures.py). Expected names are the fixture's source identifiers, expected
// lines come from markers in its source.
#include "jitdump/symbols/symbolizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace jitdump::symbols {
namespace {

namespace fs = std::filesystem;

struct MapLine {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;
  std::string path;
};

struct FixtureRun {
  std::map<std::string, uint64_t> functions;
  std::vector<MapLine> maps;

  // The executable mapping of the file named `suffix` that holds `address`.
  const MapLine& MapOf(uint64_t address) const {
    for (const MapLine& m : maps) {
      if (address >= m.start && address < m.end) return m;
    }
    ADD_FAILURE() << "no mapping holds " << std::hex << address;
    static MapLine none;
    return none;
  }
};

FixtureRun RunFixture(const char* program) {
  FixtureRun run;
  FILE* out = popen(program, "r");
  if (out == nullptr) {
    ADD_FAILURE() << "cannot run " << program;
    return run;
  }
  char line[4096];
  while (std::fgets(line, sizeof(line), out) != nullptr) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "fn") {
      std::string name;
      uint64_t address = 0;
      in >> name >> std::hex >> address;
      run.functions[name] = address;
    } else if (kind == "map") {
      MapLine m;
      in >> std::hex >> m.start >> m.end >> m.pgoff;
      in >> std::ws;
      std::getline(in, m.path);
      run.maps.push_back(m);
    }
  }
  EXPECT_EQ(pclose(out), 0) << program;
  return run;
}

// The line of the fixture library's source that holds `marker`.
uint32_t MarkerLine(const std::string& marker) {
  std::ifstream source(SYMFIX_SOURCE);
  std::string line;
  for (uint32_t number = 1; std::getline(source, line); ++number) {
    if (line.find(marker) != std::string::npos) return number;
  }
  ADD_FAILURE() << "no marker " << marker << " in " << SYMFIX_SOURCE;
  return 0;
}

std::vector<uint8_t> LibraryBuildId() {
  std::ifstream in(SYMFIX_BUILD_ID_FILE);
  std::string hex;
  in >> hex;
  std::vector<uint8_t> id;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) id.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return id;
}

std::string Layout(const std::string& name) { return std::string(SYMFIX_LAYOUTS) + "/" + name; }

Options NoHostDebug() {
  Options options;
  options.buildid_dir = "/nonexistent-jdtest-buildid-dir";
  return options;
}

class SymbolizerTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    pie_ = new FixtureRun(RunFixture(SYMFIX_PIE));
    nopie_ = new FixtureRun(RunFixture(SYMFIX_NOPIE));
  }
  static void TearDownTestSuite() {
    delete pie_;
    delete nopie_;
  }

  // A lookup of `address` of the run, through the mapping that holds it.
  static Lookup Find(Symbolizer& s, const FixtureRun& run, uint64_t address) {
    const MapLine& m = run.MapOf(address);
    return s.Find(Mapping{m.path, {}, m.start, m.end, m.pgoff, 0}, address);
  }
  // The same address as the library at usr/lib/libsymfix.so of a layout (the real mapping's
  // numbers; the copies keep the library's layout).
  static Mapping LibraryAs(const FixtureRun& run, std::string_view path, std::span<const uint8_t> build_id = {}) {
    const MapLine& m = run.MapOf(run.functions.at("symfix_c_function"));
    return Mapping{path, build_id, m.start, m.end, m.pgoff, 0};
  }
  static std::string Name(const Lookup& l) { return std::string(l.frames.back().function); }

  static FixtureRun* pie_;
  static FixtureRun* nopie_;
};
FixtureRun* SymbolizerTest::pie_ = nullptr;
FixtureRun* SymbolizerTest::nopie_ = nullptr;

TEST_F(SymbolizerTest, NamesFunctionsOfPieAndNonPieExecutablesAndLibraries) {
  for (const FixtureRun* run : {pie_, nopie_}) {
    Symbolizer s(NoHostDebug());
    const Lookup c = Find(s, *run, run->functions.at("symfix_c_function"));
    EXPECT_EQ(c.outcome, Outcome::kSymbol);
    EXPECT_EQ(Name(c), "symfix_c_function");
    EXPECT_EQ(Name(Find(s, *run, run->functions.at("local_helper"))), "symfix::(anonymous namespace)::LocalHelper");
    EXPECT_EQ(Name(Find(s, *run, run->functions.at("main"))), "main");
    EXPECT_EQ(Name(Find(s, *run, run->functions.at("main_local") + 3)), "(anonymous namespace)::MainLocal");
    EXPECT_EQ(Find(s, *run, run->functions.at("main_local") + 3).frames.back().offset, 3u);
    // perf names a caller at its return address: inside Outer, which Inner was inlined into.
    EXPECT_EQ(Name(Find(s, *run, run->functions.at("inner_return"))), "symfix::Widget::Outer");
  }
}

TEST_F(SymbolizerTest, NonPieExecutablesCallLibrariesThroughNamedPltEntries) {
  // Without PIE, a pointer to a library function taken in the program is the program's PLT
  // entry. In the stripped program (.dynsym only) perf's PLT symbol names it.
  const uint64_t plt = nopie_->functions.at("external_pointer");
  const MapLine& m = nopie_->MapOf(plt);
  Options options = NoHostDebug();
  options.root = Layout("nopie-stripped");
  Symbolizer stripped(options);
  EXPECT_EQ(Name(stripped.Find(Mapping{"/usr/bin/symfix_nopie", {}, m.start, m.end, m.pgoff, 0}, plt)),
            "symfix_c_function@plt");
  // With its .symtab, the unsized _init just before .plt covers the entry, and perf's search
  // meets _init first: perf script names it "_init", and so do we.
  Symbolizer s(NoHostDebug());
  EXPECT_EQ(Name(Find(s, *nopie_, plt)), "_init");
  // With PIE the pointer is the library's function itself.
  EXPECT_EQ(Name(Find(s, *pie_, pie_->functions.at("external_pointer"))), "symfix_c_function");
}

TEST_F(SymbolizerTest, InlineChainHasEachCallersLine) {
  Symbolizer s(NoHostDebug());
  // The call instruction: one byte before the return address.
  const Lookup l = Find(s, *pie_, pie_->functions.at("inner_return") - 1);
  ASSERT_EQ(l.frames.size(), 3u);
  EXPECT_EQ(l.frames[0].function, "symfix::(anonymous namespace)::Inner");
  EXPECT_TRUE(l.frames[0].inlined);
  EXPECT_EQ(l.frames[0].line, MarkerLine("@inner-calls-helper"));
  EXPECT_EQ(l.frames[1].function, "symfix::(anonymous namespace)::Middle");
  EXPECT_EQ(l.frames[1].line, MarkerLine("@middle-calls-inner"));
  EXPECT_EQ(l.frames[2].function, "symfix::Widget::Outer");
  EXPECT_FALSE(l.frames[2].inlined);
  EXPECT_EQ(l.frames[2].line, MarkerLine("@outer-calls-middle"));
  for (const Frame& f : l.frames) EXPECT_TRUE(f.file.ends_with("symfix_lib.cc")) << f.file;

  Options no_inline = NoHostDebug();
  no_inline.inline_chains = false;
  Symbolizer plain(no_inline);
  const Lookup one = Find(plain, *pie_, pie_->functions.at("inner_return") - 1);
  ASSERT_EQ(one.frames.size(), 1u);
  EXPECT_EQ(one.frames[0].function, "symfix::Widget::Outer");
  EXPECT_EQ(one.frames[0].line, 0u);
}

// Release frees what was read; a file asked for again is read again and named the same, and its
// report (one per file) keeps counting.
TEST_F(SymbolizerTest, ReleasedFilesAreReadAgainAndKeepTheirReport) {
  Symbolizer s(NoHostDebug());
  const uint64_t call = pie_->functions.at("inner_return") - 1;
  auto chain = [&] {
    std::vector<std::string> out;
    for (const Frame& f : Find(s, *pie_, call).frames) out.push_back(std::string(f.function) + ":" + std::to_string(f.line));
    return out;
  };
  const std::vector<std::string> before = chain();
  ASSERT_EQ(before.size(), 3u);
  const size_t files = s.Files().size();
  s.Release();
  s.Release();  // twice: nothing left to free
  EXPECT_EQ(chain(), before);
  EXPECT_EQ(Name(Find(s, *pie_, pie_->functions.at("main"))), "main");
  const std::vector<FileReport> reports = s.Files();
  EXPECT_EQ(reports.size(), files + 1);  // the library, and now the program
  uint64_t library_lookups = 0;
  for (const FileReport& r : reports) {
    if (r.recorded_path == pie_->MapOf(call).path) library_lookups = r.lookups;
  }
  EXPECT_EQ(library_lookups, 2u);
}

TEST_F(SymbolizerTest, DwarfLargerThanTheBudgetIsNotRead) {
  Options options = NoHostDebug();
  options.max_dwarf_bytes = 1024;  // the fixture's DWARF is larger
  Symbolizer s(options);
  const Lookup l = Find(s, *pie_, pie_->functions.at("inner_return") - 1);
  ASSERT_EQ(l.frames.size(), 1u);  // symbols only
  EXPECT_EQ(l.frames[0].function, "symfix::Widget::Outer");
  bool said = false;
  for (const FileReport& r : s.Files()) said |= r.problem.find("allowed: symbols only") != std::string::npos;
  EXPECT_TRUE(said) << "no file report says why its DWARF was not read";
}

TEST_F(SymbolizerTest, StrippedLibraryGetsSymbolsAndLinesFromItsDebugFile) {
  const std::vector<uint8_t> id = LibraryBuildId();
  for (const bool recorded_id : {true, false}) {
    Options options = NoHostDebug();
    options.root = Layout("stripped");
    Symbolizer s(options);
    const Mapping m = LibraryAs(*pie_, "/usr/lib/libsymfix.so", recorded_id ? std::span<const uint8_t>(id) : std::span<const uint8_t>());
    EXPECT_EQ(Name(s.Find(m, pie_->functions.at("local_helper"))), "symfix::(anonymous namespace)::LocalHelper");
    const Lookup chain = s.Find(m, pie_->functions.at("inner_return") - 1);
    EXPECT_EQ(chain.frames.size(), 3u);
    const FileReport r = s.Files().at(0);
    EXPECT_EQ(r.found_how, "path");
    EXPECT_EQ(r.symbols_how, "debug-build-id") << r.symbols_from;
    EXPECT_NE(r.debug_info_from.find(".build-id"), std::string::npos) << r.debug_info_from;
    EXPECT_EQ(r.problem, "");
  }
}

TEST_F(SymbolizerTest, DebugFileFoundThroughDebuglink) {
  Options options = NoHostDebug();
  options.root = Layout("debuglink");
  Symbolizer s(options);
  EXPECT_EQ(Name(s.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so"), pie_->functions.at("local_helper"))),
            "symfix::(anonymous namespace)::LocalHelper");
  EXPECT_EQ(s.Files().at(0).symbols_how, "debuglink");
}

TEST_F(SymbolizerTest, MiniDebugInfoNamesLocalFunctions) {
  Options options = NoHostDebug();
  options.root = Layout("minidebug");
  Symbolizer s(options);
  EXPECT_EQ(Name(s.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so"), pie_->functions.at("local_helper"))),
            "symfix::(anonymous namespace)::LocalHelper");
  EXPECT_NE(s.Files().at(0).symbol_tables.find(".gnu_debugdata"), std::string::npos) << s.Files().at(0).symbol_tables;

  // Without it, only the exported functions have names; the rest is "unknown" at its offset.
  Options bare = NoHostDebug();
  bare.root = Layout("nodebug");
  Symbolizer n(bare);
  const Mapping m = LibraryAs(*pie_, "/usr/lib/libsymfix.so");
  EXPECT_EQ(Name(n.Find(m, pie_->functions.at("symfix_c_function"))), "symfix_c_function");
  const Lookup local = n.Find(m, pie_->functions.at("local_helper"));
  EXPECT_EQ(local.outcome, Outcome::kNoSymbol);
  EXPECT_EQ(local.frames.back().function, "");
  EXPECT_EQ(local.frames.back().offset, pie_->functions.at("local_helper") - m.start + m.pgoff);
}

TEST_F(SymbolizerTest, FileWithAnotherBuildIdIsNotUsed) {
  const std::vector<uint8_t> id = LibraryBuildId();
  Options options = NoHostDebug();
  options.root = Layout("mismatch");
  Symbolizer s(options);
  const Lookup l = s.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so", id), pie_->functions.at("symfix_c_function"));
  EXPECT_EQ(l.outcome, Outcome::kBuildIdMismatch);
  EXPECT_EQ(l.frames.back().function, "");
  const std::string problem = s.Files().at(0).problem;
  EXPECT_NE(problem.find("has build id"), std::string::npos) << problem;
  EXPECT_NE(problem.find("not used"), std::string::npos) << problem;
}

TEST_F(SymbolizerTest, PerfsBuildIdCacheStandsInForAMissingFile) {
  const std::vector<uint8_t> id = LibraryBuildId();
  Options options = NoHostDebug();
  options.root = Layout("absent");
  options.buildid_dir = Layout("buildid-cache");
  Symbolizer s(options);
  const Mapping m = LibraryAs(*pie_, "/usr/lib/libsymfix.so (deleted)", id);
  EXPECT_EQ(Name(s.Find(m, pie_->functions.at("local_helper"))), "symfix::(anonymous namespace)::LocalHelper");
  EXPECT_EQ(s.Files().at(0).found_how, "buildid-cache");

  // A deleted file without a build id: whatever is at its path now is not trusted.
  Options plain = NoHostDebug();
  plain.root = Layout("plain");
  Symbolizer p(plain);
  EXPECT_EQ(p.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so (deleted)"), pie_->functions.at("local_helper")).outcome,
            Outcome::kNoFile);
  // With its build id it is.
  Symbolizer q(plain);
  EXPECT_EQ(q.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so (deleted)", id), pie_->functions.at("local_helper")).outcome,
            Outcome::kSymbol);
}

TEST_F(SymbolizerTest, DamagedAndCodelessMappingsNameNothing) {
  Options options = NoHostDebug();
  options.root = Layout("truncated");
  Symbolizer s(options);
  const Lookup t = s.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so"), pie_->functions.at("symfix_c_function"));
  EXPECT_EQ(t.outcome, Outcome::kNotElf) << s.Files().at(0).problem;
  for (const char* path : {"//anon", "[heap]", "[stack]", "/memfd:jit (deleted)", "/tmp/perf-12.map", "/dev/zero (deleted)"}) {
    const Lookup l = s.Find(Mapping{path, {}, 0x1000, 0x2000, 0, 0}, 0x1800);
    EXPECT_EQ(l.outcome, Outcome::kNoCode) << path;
    EXPECT_EQ(l.frames.back().offset, 0x1800u) << path;
  }
  EXPECT_EQ(s.Find(Mapping{"/no/such/file.so", {}, 0x1000, 0x2000, 0, 0}, 0x1800).outcome, Outcome::kNoFile);
}

TEST_F(SymbolizerTest, ThisProcessesVdsoNamesVdsoAddressesOnTheSameKernel) {
  // Our own [vdso] mapping, and the address of a function in it.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  uint64_t start = 0;
  uint64_t end = 0;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") != std::string::npos) std::sscanf(line.c_str(), "%lx-%lx", &start, &end);
  }
  if (start == 0) GTEST_SKIP() << "no vdso in this process";
  Symbolizer s(NoHostDebug());
  s.SetRecordingKernel({});  // a recording that names no kernel: this machine's is taken
  bool named = false;
  for (uint64_t a = start; a < end && !named; a += 16) {
    const Lookup l = s.Find(Mapping{"[vdso]", {}, start, end, 0, 0}, a);
    named = l.outcome == Outcome::kSymbol && l.frames.back().function.find("gettime") != std::string_view::npos;
  }
  EXPECT_TRUE(named) << "no clock_gettime in this process's vdso";
  EXPECT_EQ(s.Files().at(0).found_how, "own-vdso");
}

TEST_F(SymbolizerTest, HostileFilesNameNothing) {
  const fs::path dir = fs::temp_directory_path() / ("jdtest-symbols-hostile-" + std::to_string(getpid()));
  fs::create_directories(dir / "usr/lib");
  std::ifstream in(Layout("plain") + "/usr/lib/libsymfix.so", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 64u);
  // Section headers far past the end, a huge section count, program headers out of range.
  std::string bad = bytes;
  for (int i = 0x28; i < 0x40; ++i) bad[i] = '\xff';
  std::ofstream(dir / "usr/lib/libsymfix.so", std::ios::binary) << bad;
  Options options = NoHostDebug();
  options.root = dir.string();
  Symbolizer s(options);
  const Lookup l = s.Find(LibraryAs(*pie_, "/usr/lib/libsymfix.so"), pie_->functions.at("symfix_c_function"));
  EXPECT_NE(l.outcome, Outcome::kSymbol);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace jitdump::symbols
