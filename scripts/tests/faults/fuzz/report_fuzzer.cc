// libFuzzer target: what `jitdump report` reads from other users and from perf, as root might
// read it: a JVM's dump (jitdump/read/decoder.h ParseFile through a small window, and
// JvmCode::Load with a memory budget, as files the JVM's user controls) and perf's output (the
// `perf script` text through ScriptParser into ProcessMap's marker index and the ProfileReader,
// as `jitdump report --script` and `jitdump fold` read it), then the text outputs written from
// the profile.
//
// Input layout: DUMP_BYTES "\n#PERF-SCRIPT#\n" [SHAPE_LINE] PERF_SCRIPT_TEXT.
// SHAPE_LINE, "#SHAPE# FLAGS\n", stands for what perf.data's attrs tell the report about the
// recording: FLAGS holding 'd', return addresses already moved onto their call (--call-graph
// dwarf); holding 'w', sample times not on the dumps' clock (no -k 1); without the line, an
// fp recording on CLOCK_MONOTONIC.
// The dump is a regular file in a private directory (no link, no FIFO: those are refused before
// any byte is read, which the faults suite's root-visit tests check on real files); every marker
// in the script is looked up in that directory only (ReadOptions::dump_dirs), never at the path
// the script names.
//
// Invariants checked besides the sanitizers: ParseFile through a 64-byte window decodes exactly
// what Parse decodes from the whole file (records, offsets, truncated tail, problems); the
// budget holds (a dump that does not fit is refused, not half-read); nothing throws.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "jitdump/read/decoder.h"
#include "jitdump/report/folded.h"
#include "jitdump/report/jvm_code.h"
#include "jitdump/report/line_table.h"
#include "jitdump/report/perf_script.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile_reader.h"

namespace {

using namespace jitdump;
using namespace jitdump::report;

std::string g_dir;

void RemoveDirectory() {
  const std::string dump = g_dir + "/jit-4242.dump";
  ::unlink(dump.c_str());
  ::rmdir(g_dir.c_str());
}

void Init() {
  if (!g_dir.empty()) return;
  char pattern[] = "/tmp/report-fuzz.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) std::abort();
  g_dir = pattern;
  std::atexit(RemoveDirectory);  // libFuzzer exits normally at the end of its time
}

std::string Put(uint32_t pid, std::string_view bytes) {
  const std::string path = g_dir + "/jit-" + std::to_string(pid) + ".dump";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  if (!bytes.empty() && ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
  ::close(fd);
  return path;
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "report_fuzzer: %s\n", what);
  std::abort();
}

// The windowed read must decode exactly what the whole-file decoder does.
void CheckWindowed(const std::string& path, std::string_view bytes) {
  const JitDump whole = Parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::abort();
  JitDump windowed;
  FileLimits limits;
  limits.window = 64;
  const Status status = ParseFile(fd, bytes.size(), limits, &windowed);
  ::close(fd);
  if (!status.ok()) Fail("ParseFile failed on a file nobody changed");
  if (windowed.header_ok != whole.header_ok || windowed.records.size() != whole.records.size() ||
      windowed.truncated_offset != whole.truncated_offset || windowed.truncated_bytes != whole.truncated_bytes ||
      windowed.problems.size() != whole.problems.size() || windowed.unknown_records != whole.unknown_records) {
    Fail("the windowed read decoded something else than the whole file");
  }
  for (size_t i = 0; i < whole.records.size(); ++i) {
    const Record& a = whole.records[i];
    const Record& b = windowed.records[i];
    if (a.offset != b.offset || a.id != b.id || a.valid != b.valid || a.body.index() != b.body.index()) {
      Fail("a record differs between the windowed read and the whole file");
    }
    if (a.load() && (a.load()->name != b.load()->name || a.load()->code_offset != b.load()->code_offset)) {
      Fail("a load differs between the windowed read and the whole file");
    }
  }
  for (size_t i = 0; i < whole.problems.size(); ++i) {
    if (whole.problems[i].message != windowed.problems[i].message) Fail("a problem differs");
  }
  // A budget smaller than what the records take refuses the file rather than keeping part of it.
  JitDump small;
  limits.memory = 256;
  const int again = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  uint64_t used = 0;
  const Status budgeted = ParseFile(again, bytes.size(), limits, &small, &used);
  ::close(again);
  if (!budgeted.ok() && !small.records.empty()) Fail("a refused dump kept records");
  if (budgeted.ok() && used > 256) Fail("a dump over the budget was accepted");
}

class Sink : public ScriptSink {
 public:
  Sink(ProcessMap& processes, ScriptSink& samples) : processes_(processes), samples_(samples) {}
  void OnSample(const ScriptSample& sample) override {
    samples_.OnSample(sample);
    processes_.MarkerFor(static_cast<uint32_t>(sample.pid), sample.time_ns);
  }
  void OnEvent(const ScriptEvent& event) override { processes_.OnEvent(event); }

 private:
  ProcessMap& processes_;
  ScriptSink& samples_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Init();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static const std::string_view kScript = "\n#PERF-SCRIPT#\n";
  const size_t script_at = input.find(kScript);
  const std::string_view dump = input.substr(0, script_at);
  std::string_view script = script_at == std::string_view::npos ? std::string_view() : input.substr(script_at + kScript.size());
  static const std::string_view kShape = "#SHAPE# ";
  std::string_view shape;
  if (script.starts_with(kShape)) {
    const size_t end = script.find('\n');
    shape = script.substr(kShape.size(), end == std::string_view::npos ? std::string_view::npos : end - kShape.size());
    script = end == std::string_view::npos ? std::string_view() : script.substr(end + 1);
  }

  try {
    const std::string path = Put(4242, dump);
    CheckWindowed(path, dump);

    ReadOptions options;
    options.dump_dirs = {g_dir};
    options.dump_memory = 1 << 20;
    options.return_addresses_adjusted = shape.find('d') != std::string_view::npos;
    options.times_are_dump_clock = shape.find('w') == std::string_view::npos;

    // Every marker the script names finds its dump in g_dir only: the file written above for
    // pid 4242 (whatever path the script gives), nothing else.
    ProcessMap side_band;
    {
      class Events : public ScriptSink {
       public:
        explicit Events(ProcessMap& p) : p_(p) {}
        void OnSample(const ScriptSample&) override {}
        void OnEvent(const ScriptEvent& e) override {
          ScriptEvent local = e;
          if (e.kind == ScriptEventKind::kMmap) {
            uint32_t dump_pid = 0;
            if (!DumpFileName(e.path, &dump_pid)) return;
            local.path = g_dir + "/none/jit-" + std::to_string(dump_pid) + ".dump";  // never opened
          }
          p_.OnEvent(local);
        }

       private:
        ProcessMap& p_;
      } events(side_band);
      ScriptParser parser(events);
      size_t begin = 0;
      while (begin <= script.size()) {
        const size_t end = script.find('\n', begin);
        parser.Feed(script.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
        if (end == std::string_view::npos) break;
        begin = end + 1;
      }
      parser.Finish();
    }
    ProfileReader reader(side_band, options);
    ProcessMap queries;
    Sink sink(queries, reader);
    ScriptParser parser(sink);
    size_t begin = 0;
    while (begin <= script.size()) {
      const size_t end = script.find('\n', begin);
      parser.Feed(script.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
      if (end == std::string_view::npos) break;
      begin = end + 1;
    }
    parser.Finish();
    Profile profile = reader.Take();
    std::ostringstream out;
    WriteFolded(profile, FoldedOptions{true}, out);
    WriteLineTable(BuildLineTable(profile), 40, out);
  } catch (const std::bad_alloc&) {
    Fail("out of memory (std::bad_alloc) on a small input");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "report_fuzzer: exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
