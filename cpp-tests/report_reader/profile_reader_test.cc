// From samples and dumps to a Profile, and the outputs written from it: inline chains at the
// sampled pc and at return address - 1, frame kinds, several JVMs, a container's dump found in a
// --dumps directory (also one of two JVMs with the same pid), and what the folded stacks, the
// per-line table and the summary say.
#include "jitdump/report/profile_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/read/decoder.h"
#include "jitdump/report/folded.h"
#include "jitdump/report/line_table.h"
#include "jitdump/report/summary.h"

namespace jitdump::report {
namespace {

using jitdump::testing::Builder;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/report-reader-test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return file;
  }

 private:
  std::string path_;
};

ScriptEvent Marker(int64_t pid, std::string path) {
  ScriptEvent e;
  e.kind = ScriptEventKind::kMmap;
  e.pid = e.tid = pid;
  e.time_ns = 1;
  e.path = std::move(path);
  return e;
}

ScriptFrame F(uint64_t addr, std::string sym, std::string dso) { return ScriptFrame{addr, std::move(sym), std::move(dso)}; }

ScriptSample S(uint32_t pid, std::vector<ScriptFrame> frames, bool chain = true, std::string comm = "java") {
  ScriptSample s;
  s.comm = std::move(comm);
  s.pid = pid;
  s.tid = pid + 1;
  s.time_ns = 5000;
  s.period = 1000000;
  s.event = "cpu-clock";
  s.frames = std::move(frames);
  s.call_chain = chain;
  return s;
}

// The names of a location's inline chain, innermost first, as "name:line".
std::vector<std::string> Chain(const Profile& p, uint32_t location) {
  std::vector<std::string> out;
  for (const Line& line : p.locations[location].lines) {
    out.push_back(p.functions[line.function].name + ":" + std::to_string(line.line));
  }
  return out;
}

const std::string kMap = "/tmp/perf-4242.map";

class ProfileReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // pid 4242: Outer.run at 0x10000 inlining Mid.step and Leaf.get (reader_test_builder.h),
    // Plain.fn at 0x20000, and HotSpot's adapters at 0x30000.
    Builder b = jitdump::testing::InlineExample();
    b.Load(2003, 0x30000, 0x40, 3, "I2C/C2I adapters(0xb)");
    b.Load(2004, 0x40000, 0x100, 4, "Interpreter");
    dump_4242_ = dir_.Write("jit-4242.dump", b.bytes());
    // pid 5000: other code at the same addresses.
    Builder other;
    other.Header(1, 40, 1000, 0, 5000);
    other.Load(2000, 0x10000, 0x100, 1, "other.Other.method(int)");
    dir_.Write("jit-5000.dump", other.bytes());
    processes_.OnEvent(Marker(4242, dump_4242_));
    processes_.OnEvent(Marker(5000, dir_.path() + "/jit-5000.dump"));
  }

  TempDir dir_;
  std::string dump_4242_;
  ProcessMap processes_;
};

TEST_F(ProfileReaderTest, InlineChainsAtThePcAndInsideTheCall) {
  ProfileReader reader(processes_, ReadOptions{});
  reader.OnSample(S(4242, {F(0xffffffff81000010, "asm_exc_page_fault", "[kernel.kallsyms]"),
                           F(0x10048, "[unknown]", kMap),  // interrupted here: Leaf.get inlined
                           F(0x10080, "[unknown]", kMap),  // returns to 0x80: the call is Mid.step's
                           F(0x20010, "[unknown]", kMap),
                           F(0x1234, "start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6")}));
  const ReadStats stats = reader.stats();
  const Profile p = reader.Take();
  ASSERT_EQ(p.samples.size(), 1u);
  const std::vector<uint32_t>& stack = p.samples[0].locations;
  ASSERT_EQ(stack.size(), 5u);
  EXPECT_EQ(Chain(p, stack[0]), std::vector<std::string>{"asm_exc_page_fault:0"});
  EXPECT_EQ(p.functions[p.locations[stack[0]].lines[0].function].kind, FrameKind::kKernel);
  // The first user frame after the kernel's is the interrupted pc, looked up as is.
  EXPECT_EQ(p.locations[stack[1]].address, 0x10048u);
  EXPECT_EQ(Chain(p, stack[1]), (std::vector<std::string>{"Leaf.get:3", "Mid.step:7", "Outer.run:30"}));
  // A return address: looked up at 0x7f, inside Mid.step's range (at 0x80 it would be Outer.run's).
  EXPECT_EQ(p.locations[stack[2]].address, 0x1007fu);
  EXPECT_EQ(Chain(p, stack[2]), (std::vector<std::string>{"Mid.step:8", "Outer.run:30"}));
  EXPECT_EQ(Chain(p, stack[3]), std::vector<std::string>{"Plain.fn:0"});
  EXPECT_EQ(Chain(p, stack[4]), std::vector<std::string>{"start_thread:0"});
  EXPECT_EQ(p.functions[p.locations[stack[4]].lines[0].function].kind, FrameKind::kNative);
  const auto kinds = [&](uint32_t loc) {
    std::vector<FrameKind> out;
    for (const Line& l : p.locations[loc].lines) out.push_back(p.functions[l.function].kind);
    return out;
  };
  EXPECT_EQ(kinds(stack[1]), (std::vector<FrameKind>{FrameKind::kInlined, FrameKind::kInlined, FrameKind::kCompiled}));
  EXPECT_EQ(p.functions[p.locations[stack[1]].lines[0].function].file, "Leaf.java");
  EXPECT_EQ(stats.jit_frames, 3u);
  EXPECT_EQ(stats.jit_resolved, 3u);
  EXPECT_EQ(stats.jit_expanded, 2u);
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].dump, dump_4242_);
  EXPECT_EQ(p.processes[0].dump_pid, 4242u);
  EXPECT_EQ(p.samples[0].nanos, 1000000u);
  EXPECT_EQ(p.period_ns, 1000000u);
}

TEST_F(ProfileReaderTest, DwarfChainsAreNotSteppedBackAgain) {
  ReadOptions options;
  options.return_addresses_adjusted = true;
  ProfileReader reader(processes_, options);
  reader.OnSample(S(4242, {F(0x20010, "[unknown]", kMap), F(0x1007f, "[unknown]", kMap)}));
  const Profile p = reader.Take();
  EXPECT_EQ(p.locations[p.samples[0].locations[1]].address, 0x1007fu);
  EXPECT_EQ(Chain(p, p.samples[0].locations[1]), (std::vector<std::string>{"Mid.step:8", "Outer.run:30"}));
}

TEST_F(ProfileReaderTest, EachJvmItsOwnDump) {
  ProfileReader reader(processes_, ReadOptions{});
  reader.OnSample(S(4242, {F(0x10010, "[unknown]", kMap)}, false));
  reader.OnSample(S(5000, {F(0x10010, "[unknown]", "/tmp/perf-5000.map")}, false));
  reader.OnSample(S(6000, {F(0x10010, "[unknown]", "/tmp/perf-6000.map")}, false));  // no dump
  const Profile p = reader.Take();
  ASSERT_EQ(p.samples.size(), 3u);
  EXPECT_EQ(Chain(p, p.samples[0].locations[0]), std::vector<std::string>{"Outer.run:25"});
  EXPECT_EQ(Chain(p, p.samples[1].locations[0]), std::vector<std::string>{"other.Other.method:0"});
  EXPECT_EQ(Chain(p, p.samples[2].locations[0]), std::vector<std::string>{"[unknown]:0"});
  ASSERT_EQ(p.processes.size(), 3u);
  EXPECT_EQ(p.processes[2].dump, "");
}

TEST_F(ProfileReaderTest, AMethodInlinedIntoItselfIsTwoFunctionsOfOneName) {
  // Rec.walk inlines a call to itself at 0x20..0x40: the inline record names the method once,
  // as the outer function and as the callee, so both frames of a chain spell it from the same
  // bytes. The inlined frame stays an inlined one and the outer a compiled one, with their lines,
  // and the next chain through it finds the same two functions again.
  Builder b;
  b.Header(1, 40, 1000, 0, 4343);
  b.Samply(2000, {"Rec.java"}, {"Rec.walk"}, {{0, 0, 10, 0, 0}}, {{0, 1, 0, 12, 0}}, {{0x20, 0x20}},
           {{0x0, 0, 11, 0}, {0x20, 0, 15, 0}, {0x30, 0, 16, 0}, {0x40, 0, 13, 0}});
  b.Load(2001, 0x10000, 0x100, 1, "Rec.walk");
  processes_.OnEvent(Marker(4343, dir_.Write("jit-4343.dump", b.bytes())));
  ProfileReader reader(processes_, ReadOptions{});
  reader.OnSample(S(4343, {F(0x10028, "[unknown]", "/tmp/perf-4343.map")}, false));
  reader.OnSample(S(4343, {F(0x10034, "[unknown]", "/tmp/perf-4343.map")}, false));
  reader.OnSample(S(4343, {F(0x10044, "[unknown]", "/tmp/perf-4343.map")}, false));
  const Profile p = reader.Take();
  ASSERT_EQ(p.samples.size(), 3u);
  std::map<uint64_t, uint32_t> by_address;
  for (const Sample& sample : p.samples) by_address[p.locations[sample.locations[0]].address] = sample.locations[0];
  const uint32_t inlined = by_address.at(0x10028);
  EXPECT_EQ(Chain(p, inlined), (std::vector<std::string>{"Rec.walk:15", "Rec.walk:12"}));
  const auto kinds = [&](uint32_t loc) {
    std::vector<FrameKind> out;
    for (const Line& l : p.locations[loc].lines) out.push_back(p.functions[l.function].kind);
    return out;
  };
  EXPECT_EQ(kinds(inlined), (std::vector<FrameKind>{FrameKind::kInlined, FrameKind::kCompiled}));
  EXPECT_EQ(Chain(p, by_address.at(0x10034)), (std::vector<std::string>{"Rec.walk:16", "Rec.walk:12"}));
  EXPECT_EQ(kinds(by_address.at(0x10034)), (std::vector<FrameKind>{FrameKind::kInlined, FrameKind::kCompiled}));
  EXPECT_EQ(Chain(p, by_address.at(0x10044)), (std::vector<std::string>{"Rec.walk:13"}));
  EXPECT_EQ(kinds(by_address.at(0x10044)), std::vector<FrameKind>{FrameKind::kCompiled});
  size_t named = 0;
  for (const Function& f : p.functions) named += f.name == "Rec.walk";
  EXPECT_EQ(named, 2u);  // one compiled, one inlined
}

TEST_F(ProfileReaderTest, ContainerDumpFromADumpsDirectory) {
  // pid 7000 on the host is pid 1 in its container; its agent mapped /tmp/jit-1.dump there, and
  // `collect watch` copied it to DIR/jit-7000.dump with the host pid in the header.
  Builder b;
  b.Header(1, 40, 1000, 0, 7000);
  b.Load(2000, 0x10000, 0x100, 1, "c.Container.run()");
  TempDir collected;
  collected.Write("jit-7000.dump", b.bytes());
  processes_.OnEvent(Marker(7000, "/nonexistent-container-root/tmp/jit-1.dump"));
  ReadOptions options;
  options.dump_dirs = {collected.path()};
  ProfileReader reader(processes_, options);
  reader.OnSample(S(7000, {F(0x10010, "[unknown]", "/tmp/perf-7000.map")}, false));
  const Profile p = reader.Take();
  EXPECT_EQ(Chain(p, p.samples[0].locations[0]), std::vector<std::string>{"c.Container.run:0"});
  EXPECT_EQ(p.processes[0].dump_pid, 7000u);
  EXPECT_TRUE(reader.stats().warnings.empty());
}

TEST_F(ProfileReaderTest, SamePidDumpFromItsSubdirectory) {
  // Two containers share a volume, each JVM pid 1: the first wrote DIR/jit-1.dump, the second
  // found it held and wrote DIR/jit-1-2/jit-1.dump. Both headers say pid 1; each marker's path
  // says which file is its JVM's.
  TempDir shared;
  auto dump = [&](const std::string& name, const char* method) {
    Builder b;
    b.Header(1, 40, 1000, 0, 1);
    b.Load(2000, 0x10000, 0x100, 1, method);
    return shared.Write(name, b.bytes());
  };
  dump("jit-1.dump", "a.First.run()");
  ASSERT_EQ(mkdir((shared.path() + "/jit-1-2").c_str(), 0755), 0);
  const std::string second = dump("jit-1-2/jit-1.dump", "b.Second.run()");
  processes_.OnEvent(Marker(7000, "/nonexistent-container-root/jit/jit-1.dump"));
  processes_.OnEvent(Marker(7001, "/nonexistent-container-root/jit/jit-1-2/jit-1.dump"));
  ReadOptions options;
  options.dump_dirs = {shared.path()};
  ProfileReader reader(processes_, options);
  reader.OnSample(S(7000, {F(0x10010, "[unknown]", "/tmp/perf-7000.map")}, false));
  reader.OnSample(S(7001, {F(0x10010, "[unknown]", "/tmp/perf-7001.map")}, false));
  const Profile p = reader.Take();
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(Chain(p, p.samples[0].locations[0]), std::vector<std::string>{"a.First.run:0"});
  EXPECT_EQ(Chain(p, p.samples[1].locations[0]), std::vector<std::string>{"b.Second.run:0"});
  ASSERT_EQ(p.processes.size(), 2u);
  EXPECT_EQ(p.processes[1].dump, second);
  EXPECT_TRUE(reader.stats().warnings.empty());
}

TEST_F(ProfileReaderTest, MissingDumpIsAWarning) {
  processes_.OnEvent(Marker(8000, "/nonexistent/jit-8000.dump"));
  ProfileReader reader(processes_, ReadOptions{});
  reader.OnSample(S(8000, {F(0x10010, "[unknown]", "/tmp/perf-8000.map")}, false));
  ASSERT_EQ(reader.stats().warnings.size(), 1u);
  EXPECT_NE(reader.stats().warnings[0].find("no readable dump for pid 8000"), std::string::npos);
}

TEST_F(ProfileReaderTest, OtherEventsAreLeftOut) {
  ProfileReader reader(processes_, ReadOptions{});
  ScriptSample s = S(4242, {F(0x10010, "[unknown]", kMap)}, false);
  reader.OnSample(s);
  s.event = "cycles";
  reader.OnSample(s);
  EXPECT_EQ(reader.stats().samples, 1u);
  EXPECT_EQ(reader.stats().skipped_events.at("cycles"), 1u);
}

// Native symbols that name every address but kNoFile (nothing to read) and kUnnamed (no symbol
// covers it): an inlined function and the one holding it.
class FakeNativeSymbols final : public NativeSymbols {
 public:
  static constexpr uint64_t kNoFile = 0x5000;
  static constexpr uint64_t kUnnamed = 0x6000;
  bool Defer(uint32_t, const StackFrame& frame, const FrameDso&, uint32_t ticket) override {
    if (frame.addr == kNoFile) return false;
    deferred.emplace_back(ticket, frame.addr);
    return true;
  }
  void NameDeferred(const std::function<void(uint32_t, std::span<const NativeName>)>& each) override {
    ++namings;
    for (const auto& [ticket, addr] : deferred) {
      const std::string inlined = "inlined_" + std::to_string(addr);  // the names are views: valid during the call
      const std::vector<NativeName> names{{inlined, "lib.c", 7}, {"holder", "lib.c", 3}};
      each(ticket, addr == kUnnamed ? std::span<const NativeName>() : std::span<const NativeName>(names));
    }
    asked += deferred.size();
    deferred.clear();
  }
  std::vector<std::pair<uint32_t, uint64_t>> deferred;
  size_t asked = 0;
  int namings = 0;
};

// Native frames are named after the last sample (NameNatives), each distinct one asked for once;
// one nothing names is named after its DSO, as one the symbols cannot take.
TEST_F(ProfileReaderTest, NativeFramesAreNamedAfterTheLastSample) {
  for (const bool name_first : {true, false}) {
    ProfileReader reader(processes_, ReadOptions{});
    FakeNativeSymbols symbols;
    reader.set_native_symbols(&symbols);
    const uint32_t lib = reader.dsos().Intern("/usr/lib/libx.so");
    std::vector<StackFrame> frames(3);
    const uint64_t addrs[] = {0x1000, FakeNativeSymbols::kNoFile, FakeNativeSymbols::kUnnamed};
    for (size_t i = 0; i < frames.size(); ++i) {
      frames[i].addr = frames[i].file_addr = addrs[i];
      frames[i].dso = lib;
    }
    StackSample sample;
    sample.pid = 7000;
    sample.tid = 7001;
    sample.comm = "native";
    sample.frames = frames;
    for (int i = 0; i < 3; ++i) reader.Add(sample);
    EXPECT_EQ(symbols.namings, 0);  // nothing is named while samples come
    // Take() names them when the caller has not.
    if (name_first) reader.NameNatives();
    const Profile p = reader.Take();
    EXPECT_EQ(symbols.namings, 1);
    EXPECT_EQ(symbols.asked, 2u);  // 0x1000 and kUnnamed, once each
    ASSERT_EQ(p.samples.size(), 1u);
    EXPECT_EQ(p.samples[0].count, 3u);
    const std::vector<uint32_t>& stack = p.samples[0].locations;
    ASSERT_EQ(stack.size(), 3u);
    EXPECT_EQ(Chain(p, stack[0]), (std::vector<std::string>{"inlined_4096:7", "holder:3"}));
    EXPECT_EQ(p.functions[p.locations[stack[0]].lines[0].function].file, "lib.c");
    EXPECT_EQ(p.functions[p.locations[stack[0]].lines[0].function].kind, FrameKind::kNative);
    EXPECT_EQ(Chain(p, stack[1]), std::vector<std::string>{"[libx.so]:0"});
    EXPECT_EQ(Chain(p, stack[2]), std::vector<std::string>{"[libx.so]:0"});
    EXPECT_NE(stack[1], stack[2]);  // two addresses, two locations
  }
}

// The outputs, from one small profile: 4 samples in Leaf.get inlined, 2 in Outer.run, 3 in the
// adapters, 1 interpreted, 1 in the kernel, 1 unresolved JIT.
class OutputsTest : public ProfileReaderTest {
 protected:
  void SetUp() override {
    ProfileReaderTest::SetUp();
    ProfileReader reader(processes_, ReadOptions{});
    auto add = [&](int n, std::vector<ScriptFrame> frames) {
      for (int i = 0; i < n; ++i) reader.OnSample(S(4242, frames));
    };
    add(4, {F(0x10048, "[unknown]", kMap), F(0x40010, "[unknown]", kMap)});
    add(2, {F(0x10004, "[unknown]", kMap), F(0x40010, "[unknown]", kMap)});
    add(3, {F(0x30004, "[unknown]", kMap)});
    add(1, {F(0x40004, "[unknown]", kMap)});
    add(1, {F(0xffffffff81000010, "clear_page_erms", "[kernel.kallsyms]")});
    add(1, {F(0x90000, "[unknown]", kMap)});
    stats_ = reader.stats();
    profile_ = reader.Take();
  }
  ReadStats stats_;
  Profile profile_;
};

TEST_F(OutputsTest, FoldedStacksWithAndWithoutSuffixes) {
  std::ostringstream plain, annotated;
  WriteFolded(profile_, FoldedOptions{}, plain);
  WriteFolded(profile_, FoldedOptions{true}, annotated);
  EXPECT_EQ(plain.str(),
            "java;I2C/C2I adapters(0xb) 3\n"
            "java;Interpreter 1\n"
            "java;Interpreter;Outer.run 2\n"
            "java;Interpreter;Outer.run;Mid.step;Leaf.get 4\n"
            "java;[unknown] 1\n"
            "java;clear_page_erms 1\n");
  EXPECT_EQ(annotated.str(),
            "java;I2C/C2I adapters(0xb) 3\n"
            "java;Interpreter_[0] 1\n"
            "java;Interpreter_[0];Outer.run_[j] 2\n"
            "java;Interpreter_[0];Outer.run_[j];Mid.step_[i];Leaf.get_[i] 4\n"
            "java;[unknown] 1\n"
            "java;clear_page_erms_[k] 1\n");
}

TEST_F(OutputsTest, LineTableCountsTheInnermostLine) {
  const LineTable table = BuildLineTable(profile_);
  EXPECT_EQ(table.samples, 12u);
  EXPECT_EQ(table.java, 6u);  // the adapters are not Java, for all the "(" in their name
  EXPECT_EQ(table.java_with_line, 6u);
  EXPECT_EQ(table.interpreted, 1u);
  ASSERT_GE(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0].key, "Leaf.java:3");
  EXPECT_EQ(table.rows[0].samples, 4u);
  EXPECT_EQ(table.rows[0].method, "Leaf.get");
  EXPECT_EQ(table.rows[0].compiled_in, "Outer.run");
  EXPECT_EQ(table.rows[1].key, "[jit stubs]");
  EXPECT_EQ(table.rows[2].key, "Outer.java:25");
  std::ostringstream text;
  WriteLineTable(table, 0, text);
  EXPECT_NE(text.str().find("# java_srcline_share: 100.00% of the samples in compiled Java methods have a File.java:N"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("Leaf.java:3"), std::string::npos);
  EXPECT_NE(text.str().find("Leaf.get (inlined into Outer.run)"), std::string::npos) << text.str();
}

TEST_F(OutputsTest, SummaryShares) {
  const nlohmann::json s = Summary(profile_, stats_, {{0u, nlohmann::json{{"events", 5}}}});
  EXPECT_EQ(s["samples"], 12);
  EXPECT_EQ(s["java"], 6);
  EXPECT_EQ(s["java_with_line_percent"], 100.0);
  EXPECT_EQ(s["interpreted"], 1);
  EXPECT_EQ(s["jit"], 11);  // all but the kernel sample
  EXPECT_EQ(s["jit_named"], 10);
  EXPECT_EQ(s["named"], 11);
  EXPECT_EQ(s["named_percent"], 91.67);
  ASSERT_EQ(s["processes"].size(), 1u);
  EXPECT_EQ(s["processes"][0]["pid"], 4242);
  EXPECT_EQ(s["processes"][0]["jvm"], true);
  EXPECT_EQ(s["processes"][0]["agent_stats"]["events"], 5);
  EXPECT_EQ(s["reader"]["jit_frames"], 17);
}

}  // namespace
}  // namespace jitdump::report
