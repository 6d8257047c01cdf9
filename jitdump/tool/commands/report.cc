// `jitdump report PERF.DATA`: a perf recording and the dumps of its JVMs in, every report output
// out (folded stacks, the per-line table, the JSON summary, pprof and the HTML flame graph). The
// reading is jitdump/report/ (perf_data_source.h reads perf.data through jitdump/perfdata and names
// native frames through jitdump/symbols; profile_reader.h builds the Profile);
// this file picks the outputs and writes them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "jitdump/format/text.h"
#include "jitdump/read/untrusted_file.h"
#include "jitdump/report/batch_malloc.h"
#include "jitdump/report/dump_locator.h"
#include "jitdump/report/flamegraph_writer.h"
#include "jitdump/report/folded.h"
#include "jitdump/report/line_stream.h"
#include "jitdump/report/line_table.h"
#include "jitdump/perfdata/reader.h"
#include "jitdump/report/perf_data_source.h"
#include "jitdump/report/pprof_writer.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile_check.h"
#include "jitdump/report/profile_json.h"
#include "jitdump/report/profile_reader.h"
#include "jitdump/report/summary.h"
#include "jitdump/write/safe_file.h"
#include "jitdump/tool/command.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump report [OPTIONS] PERF.DATA\n"
    "       jitdump report [OPTIONS] --script FILE [PERF.DATA]\n"
    "Reads a perf recording (raw perf.data, a file or '-' for perf record -o -'s stream, -z too: no\n"
    "perf inject and no perf needed) and the jitdumps of the JVMs in it, names every JIT frame by\n"
    "address and time, expands inlined frames, and writes:\n"
    "  folded.txt       folded stacks for flamegraph.pl, speedscope, inferno (--annotate: _[j]\n"
    "                   compiled, _[i] inlined, _[0] interpreted, _[k] kernel suffixes)\n"
    "  srcline.txt      samples per Java source line, with the method at each\n"
    "  summary.json     shares named / with a source line / interpreted, per JVM, agent stats\n"
    "  profile.pb.gz    pprof (go tool pprof, Pyroscope, Parca, ...)\n"
    "  flamegraph.html  a self-contained HTML flame graph\n"
    "options:\n"
    "  -o, --output DIR   write every output into DIR (created if missing)\n"
    "  --folded FILE      write the folded stacks to FILE ('-': standard output); likewise\n"
    "  --srcline FILE     the per-line table, --summary FILE the JSON summary,\n"
    "  --pprof FILE       pprof, --html FILE the flame graph, --profile-json FILE the symbolized\n"
    "                     profile itself (functions, locations with inline chains, stacks) as JSON\n"
    "  --annotate         frame-kind suffixes in the folded stacks\n"
    "  --dumps DIR        also look for jit-<pid>.dump in DIR and in DIR/jit-<pid>-N/ (repeatable):\n"
    "                     dumps copied from containers (scripts/bin/collect watch names them by the\n"
    "                     host pid; a copy named by the container's pid works when that pid is\n"
    "                     unique or the recording names its jit-<pid>-N subdirectory)\n"
    "  --stats PATTERN    the agents' stats= files, %p standing for the JVM's pid\n"
    "  --top N            rows of the per-line table (default: all in files, 40 on stdout)\n"
    "  --event NAME       only this event's samples (default: the first event recorded)\n"
    "  --title TEXT       the flame graph's title\n"
    "  --dump-memory MIB  what the decoded dumps may take in memory (default 1024); a dump that\n"
    "                     does not fit is left out, a sampled load's lines and inlined frames\n"
    "                     that no longer fit are left out, each with a warning\n"
    "  --script FILE      read the samples from `perf script --show-mmap-events --show-task-events\n"
    "                     --ns --no-inline -F comm,pid,tid,time,period,event,ip,sym,dso` text ('-':\n"
    "                     standard input) instead of perf.data; PERF.DATA, if also given, is the\n"
    "                     recording the text was printed from (its clock and call-graph mode)\n"
    "  -q, --quiet        no summary line on stderr\n"
    "Native and kernel frames are named from their ELF files, DWARF and kallsyms; perf is not run.\n"
    "Without -o and per-output options, prints the per-line table. Each JVM's dump is found from the\n"
    "marker mmap its agent made (the path is in the recording), then in the --dumps directories.\n"
    "Record with perf record -k 1 so sample times are the dumps' clock; with -g and\n"
    "-XX:+PreserveFramePointer for whole Java stacks.\n"
    "Dumps and stats files belong to the JVMs' users and are read as hostile: no symlink is\n"
    "followed, only regular files are read, without blocking, through a window (never mapped),\n"
    "and a refused file is named, never quoted. Outputs replace what is at their names (another\n"
    "user's symlink there is replaced, not followed); a FIFO or device (/dev/null) is written to.\n"
    "exit status: 0 ok, 1 an output could not be written, 2 usage error or unreadable recording\n";

constexpr OptionSpec kOptions[] = {
    {"-o,--output", "DIR"},  {"--folded", "FILE"},    {"--srcline", "FILE"}, {"--summary", "FILE"},
    {"--pprof", "FILE"},     {"--html", "FILE"},      {"--profile-json", "FILE"},
    {"--annotate", ""},      {"--dumps", "DIR", true}, {"--stats", "PATTERN"}, {"--top", "N"},
    {"--event", "NAME"},     {"--title", "TEXT"},     {"--script", "FILE"},
    {"-q,--quiet", ""},      {"--dump-memory", "MIB"},
};

struct ReportRequest {
  std::string input;             // perf.data (raw: no perf inject needed)
  std::string script;            // perf script text to read the samples from instead ("-": stdin)
  std::string out_dir;           // -o: every output into this directory
  std::string folded;            // per-output files ("-" for standard output)
  std::string srcline;
  std::string summary;
  std::string pprof;
  std::string html;
  std::string profile_json;      // the Profile model itself (tests, other tools)
  bool annotate = false;         // _[j] _[i] _[0] _[k] suffixes in the folded stacks
  std::vector<std::string> dump_dirs;
  std::string stats_pattern;     // the agents' stats files, %p = the JVM's pid
  size_t top = 0;                // rows of the per-line table (0: all)
  std::string event;             // only this event's samples
  std::string title;             // of the flame graph
  bool quiet = false;
  uint64_t dump_memory_mib = 1024;  // the decoded dumps' budget
};

// An agent's stats file is a few KiB; anything larger is not one.
constexpr uint64_t kMaxStatsBytes = 16 << 20;

using report::Profile;

// Feeds events to the process map and drops samples (the side-band pass over a script file).
class SideBand : public report::ScriptSink {
 public:
  explicit SideBand(report::ProcessMap& processes) : processes_(processes) {}
  void OnSample(const report::ScriptSample&) override {}
  void OnEvent(const report::ScriptEvent& event) override { processes_.OnEvent(event); }

 private:
  report::ProcessMap& processes_;
};

// Standard input can be read once: its events go to the process map as they come (a dump
// mapped after its first samples, by a late attach, then misses those samples).
class EventsAndSamples : public report::ScriptSink {
 public:
  EventsAndSamples(report::ProcessMap& processes, report::ScriptSink& samples) : processes_(processes), samples_(samples) {}
  void OnSample(const report::ScriptSample& sample) override { samples_.OnSample(sample); }
  void OnEvent(const report::ScriptEvent& event) override { processes_.OnEvent(event); }

 private:
  report::ProcessMap& processes_;
  report::ScriptSink& samples_;
};

bool ReadScriptFile(const std::string& path, report::ScriptSink& sink, std::string* error) {
  report::ScriptParser parser(sink);
  const bool ok = report::ForEachFileLine(path, [&](std::string_view line) { parser.Feed(line); }, error);
  parser.Finish();
  return ok;
}

// The stats each JVM's agent wrote, by process index: looked up by the JVM's own pid (what %p
// expands to in the agent), then by perf's pid.
std::map<uint32_t, nlohmann::json> AgentStats(const Profile& profile, const std::string& pattern) {
  std::map<uint32_t, nlohmann::json> out;
  if (pattern.empty()) return out;
  for (size_t i = 0; i < profile.processes.size(); ++i) {
    const report::Process& p = profile.processes[i];
    if (p.dump.empty()) continue;
    for (uint32_t pid : {p.dump_pid, p.pid}) {
      const std::string path = ExpandPid(pattern, pid);
      std::string text;
      if (const Status status = ReadUntrusted(path, kMaxStatsBytes, &text); !status.ok()) {
        if (status.err_no() != ENOENT) {
          std::fprintf(stderr, "jitdump report: warning: stats file %s: %s\n", Printable(path).c_str(),
                       status.ToString().c_str());
        }
        continue;
      }
      nlohmann::json stats = nlohmann::json::parse(text, nullptr, false);
      if (!stats.is_discarded() && stats.is_object()) {
        out[static_cast<uint32_t>(i)] = std::move(stats);
      } else {
        std::fprintf(stderr, "jitdump report: warning: stats file %s is not a JSON object\n",
                     Printable(path).c_str());
      }
      break;
    }
  }
  return out;
}

// A directory outputs go into, held (O_PATH) while they are written: `path` itself when it is
// the -o directory, else the directory holding a named output.
class OutputDirectory {
 public:
  OutputDirectory() = default;
  ~OutputDirectory() {
    if (fd_ >= 0) ::close(fd_);
  }
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  // Holds `dir`; with `no_follow`, a symlink at its last component is refused.
  bool Open(const std::string& dir, bool no_follow, std::string* error) {
    fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0));
    if (fd_ < 0) {
      *error = Printable(dir) + ": " +
               (errno == ENOTDIR || errno == ELOOP ? std::string("not a directory (a symlink is not followed)")
                                                   : std::string(std::strerror(errno)));
      return false;
    }
    return true;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Writes one output to `path` ("-": stdout) through `write`; false (message printed) on failure.
// A file is written under a fresh name in its directory and renamed over `path`: whatever was
// at the name (a symlink someone planted, a file of another user) is replaced, never followed or
// written through, and a failed write leaves the old output in place. What is not replaced:
// a FIFO or a device at the name (/dev/null, a pipe) is written as it is, and so is whatever a
// symlink of the caller's or root's leads to (/dev/stdout).
template <typename Write>
bool WriteOutput(const std::string& path, const char* what, Write write, int out_dir = -1) {
  std::string error;
  if (path == "-") {
    const bool ok = write(std::cout, &error);
    std::cout.flush();
    if (!ok || !std::cout) {
      std::fprintf(stderr, "jitdump report: %s: %s\n", what, error.empty() ? "write failed" : error.c_str());
      return false;
    }
    return true;
  }
  struct stat st {};
  const int at = out_dir >= 0 ? out_dir : AT_FDCWD;
  const std::string at_name = out_dir >= 0 ? path.substr(path.rfind('/') + 1) : path;
  if (::fstatat(at, at_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
       (S_ISLNK(st.st_mode) && (st.st_uid == 0 || st.st_uid == ::geteuid())))) {
    const int fd = ::openat(at, at_name.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISLNK(st.st_mode) ? O_TRUNC : 0));
    struct stat target {};
    if (fd >= 0 && ::fstat(fd, &target) == 0 && (S_ISFIFO(target.st_mode) || S_ISCHR(target.st_mode) || S_ISREG(target.st_mode))) {
      bool ok;
      {
        __gnu_cxx::stdio_filebuf<char> buffer(fd, std::ios::out | std::ios::binary);
        std::ostream out(&buffer);
        ok = write(out, &error);
        out.flush();
        ok = ok && static_cast<bool>(out);
      }  // closes fd
      if (!ok) {
        std::fprintf(stderr, "jitdump report: writing %s to %s failed: %s\n", what, Printable(path).c_str(),
                     error.empty() ? "write failed" : error.c_str());
      }
      return ok;
    }
    if (fd >= 0) ::close(fd);
    std::fprintf(stderr, "jitdump report: cannot write %s to %s: %s\n", what, Printable(path).c_str(),
                 fd < 0 ? std::strerror(errno) : "not a file, FIFO or device");
    return false;
  }
  OutputDirectory parent;
  const std::string name(BaseName(path));
  if (out_dir < 0) {
    if (!parent.Open(DirectoryOf(path), false, &error)) {
      std::fprintf(stderr, "jitdump report: cannot write %s: %s\n", what, error.c_str());
      return false;
    }
    out_dir = parent.fd();
  }
  int fd = -1;
  std::string temporary;
  if (const Status status = CreateTemporaryAt(out_dir, "." + name + ".", O_WRONLY, 0644, &fd, &temporary);
      !status.ok()) {
    std::fprintf(stderr, "jitdump report: cannot write %s to %s: %s\n", what, Printable(path).c_str(),
                 status.ToString().c_str());
    return false;
  }
  bool ok;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(fd, std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    ok = write(out, &error);
    out.flush();
    ok = ok && static_cast<bool>(out);
    if (ok && error.empty() && !out) error = "write failed";
  }  // closes fd
  if (ok && ::renameat(out_dir, temporary.c_str(), out_dir, name.c_str()) != 0) {
    error = std::string("rename into place: ") + std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    ::unlinkat(out_dir, temporary.c_str(), 0);
    std::fprintf(stderr, "jitdump report: writing %s to %s failed: %s\n", what, Printable(path).c_str(),
                 error.empty() ? "write failed" : error.c_str());
    return false;
  }
  return true;
}

// A writer's Status as WriteOutput's (ok, error) pair.
bool WriteStatus(const Status& status, std::string* error) {
  if (!status.ok()) *error = status.ToString();
  return status.ok();
}

// Several JVMs with one pid wrote into one directory (jit-<pid>.dump, jit-<pid>-2/...) and no
// marker in the recording says which is the recorded process's: the first is used, not silently.
void WarnSamePidDumps(const report::FoundDump& dump) {
  if (dump.others.empty()) return;
  std::string others;
  for (const std::string& path : dump.others) others += (others.empty() ? "" : ", ") + path;
  std::fprintf(stderr,
               "jitdump report: warning: pid %" PRIu32 " has %zu dumps in one --dumps directory and the recording "
               "names none of them: using %s, not %s (to use another, give a directory holding only it with --dumps)\n",
               dump.pid, dump.others.size() + 1, dump.path.c_str(), others.c_str());
}

// Where each native file's and the kernel's symbols came from, and why some gave none.
nlohmann::json SymbolFilesJson(const report::PerfDataSource& source) {
  nlohmann::json files = nlohmann::json::array();
  for (const symbols::FileReport& f : source.SymbolFiles()) {
    files.push_back({{"path", f.recorded_path},
                     {"build_id", f.build_id},
                     {"found_at", f.found_at},
                     {"found_how", f.found_how},
                     {"symbols_from", f.symbols_from},
                     {"symbols_how", f.symbols_how},
                     {"symbol_tables", f.symbol_tables},
                     {"debug_info_from", f.debug_info_from},
                     {"problem", f.problem},
                     {"lookups", f.lookups},
                     {"named", f.named}});
  }
  return files;
}

// What the perf.data reader saw of the recording, for summary.json: who recorded it, how, and
// what was lost or damaged.
nlohmann::json RecordingJson(const report::PerfDataSource& source) {
  const perfdata::Recording& rec = source.recording();
  const perfdata::ReadStats& st = source.stats();
  nlohmann::json events = nlohmann::json::array();
  for (const perfdata::Event& e : rec.events) events.push_back(e.name);
  return {{"reader", "perfdata"},
          {"mode", rec.pipe ? "pipe" : "file"},
          {"perf_version", rec.features.version},
          {"hostname", rec.features.hostname},
          {"os_release", rec.features.os_release},
          {"events", std::move(events)},
          {"compressed", st.compressed > 0},
          {"samples", st.samples},
          {"lost_records", st.lost},
          {"lost_samples", st.lost_samples},
          {"throttled", st.throttled},
          {"damaged", st.truncated},
          {"warnings", source.warnings()},
          {"symbol_files", SymbolFilesJson(source)}};
}

int RunReport(ReportRequest req) {
  OutputDirectory out_dir;
  if (!req.out_dir.empty()) {
    std::string error;
    if (mkdir(req.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "jitdump report: cannot create %s: %s\n", Printable(req.out_dir).c_str(),
                   std::strerror(errno));
      return kExitInvalid;
    }
    if (!out_dir.Open(req.out_dir, true, &error)) {
      std::fprintf(stderr, "jitdump report: -o %s\n", error.c_str());
      return kExitInvalid;
    }
    auto in_dir = [&](std::string& field, const char* name) {
      if (field.empty()) field = req.out_dir + "/" + name;
    };
    in_dir(req.folded, "folded.txt");
    in_dir(req.srcline, "srcline.txt");
    in_dir(req.summary, "summary.json");
    in_dir(req.pprof, "profile.pb.gz");
    in_dir(req.html, "flamegraph.html");
  }
  // Outputs that go into -o DIR are created relative to the directory held since it was checked.
  auto dir_of = [&](const std::string& path) {
    return out_dir.fd() >= 0 && path == req.out_dir + "/" + std::string(BaseName(path)) ? out_dir.fd() : -1;
  };
  const bool any_output = !req.folded.empty() || !req.srcline.empty() || !req.summary.empty() || !req.pprof.empty() ||
                          !req.html.empty() || !req.profile_json.empty();
  if (!any_output) {
    req.srcline = "-";
    if (req.top == 0) req.top = 40;
  }

  // Pass 1: the side-band events (where each JVM's dump is, exits, execs) and the recording's
  // shape. Pass 2 streams the samples through the profile reader.
  report::ProcessMap processes;
  SideBand side_band(processes);
  report::RecordingShape shape;
  shape.has_time = shape.monotonic_clock = true;
  std::string error;
  std::unique_ptr<report::PerfDataSource> perf_data;
  if (!req.input.empty()) {
    perf_data = report::PerfDataSource::Open(req.input, &error);
    if (!perf_data) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return kExitUsage;
    }
    // With --script, the recording only says how it was made (its attrs): the samples and the
    // side-band events are the text's.
    if (!req.script.empty() || perf_data->rereadable()) {
      if (req.script.empty()) perf_data->ReadSideBand(processes);
      shape = perf_data->Shape();
      if (!shape.monotonic_clock) {
        std::fprintf(stderr,
                     "jitdump report: warning: %s was not recorded with -k 1 (CLOCK_MONOTONIC, the dumps' clock): "
                     "JIT frames are named from the code each dump leaves at their address, not the code there "
                     "at the sample's time\n",
                     req.input.c_str());
      }
    }
  }
  if (!req.script.empty() && req.script != "-") {
    if (!ReadScriptFile(req.script, side_band, &error)) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return kExitUsage;
    }
  }
  // Dumps in --dumps directories that no marker names (the agent's marker mapping failed, or
  // the script has no side-band events) describe the pid of their name.
  const bool no_events = processes.commands().empty() && processes.markers().empty();
  for (report::FoundDump& dump : report::DumpsInDirectories(req.dump_dirs)) {
    if (!processes.HasMarker(dump.pid) && (no_events || processes.commands().count(dump.pid) != 0)) {
      WarnSamePidDumps(dump);
      processes.AddMarker(dump.pid, dump.pid, std::move(dump.path));
    }
  }

  // The reader holds the dumps and its caches, the perf.data source the native symbols (ELF
  // tables, DWARF): both are gone before the outputs are written, so they reuse that
  // memory instead of faulting in fresh pages (each fresh page is zeroed by the kernel: a sizeable
  // share of a report's CPU).
  report::ReadStats stats;
  Profile profile;
  nlohmann::json recording;  // what the perf.data source saw, for summary.json
  {
    report::ReadOptions options;
    options.dump_dirs = req.dump_dirs;
    options.return_addresses_adjusted = shape.dwarf_call_chains;
    options.times_are_dump_clock = shape.monotonic_clock;
    options.event = req.event;
    options.dump_memory = req.dump_memory_mib << 20;
    report::ProfileReader reader(processes, options);
    EventsAndSamples from_stdin(processes, reader);
    bool read = true;
    if (req.script.empty()) {
      perf_data->ReadSamples(reader, perf_data->rereadable() ? nullptr : &processes);
      for (const std::string& warning : perf_data->warnings()) {
        std::fprintf(stderr, "jitdump report: warning: %s: %s\n", req.input.c_str(), warning.c_str());
      }
    } else {
      read = req.script == "-" ? ReadScriptFile(req.script, from_stdin, &error) : ReadScriptFile(req.script, reader, &error);
    }
    if (!read) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return kExitUsage;
    }
    stats = reader.stats();
    // The source's symbol tables and DWARF go before the profile is made, as the reader's own
    // loads do inside Take(): the profile's samples are the peak and reuse their memory.
    if (perf_data && req.script.empty()) recording = RecordingJson(*perf_data);
    perf_data.reset();
    profile = reader.Take();
  }
  for (const std::string& warning : stats.warnings) std::fprintf(stderr, "jitdump report: warning: %s\n", warning.c_str());
  for (const auto& [event, n] : stats.skipped_events) {
    std::fprintf(stderr, "jitdump report: %" PRIu64 " samples of event %s left out (--event picks one)\n", n,
                 event.c_str());
  }

  bool ok = true;
  // The profile checked, and its samples in the order of their paths, once for the three outputs
  // that walk them so.
  report::CheckedOrder order;
  if (!req.folded.empty() || !req.pprof.empty() || !req.html.empty()) {
    if (const Status checked = report::CheckedOrder::Of(profile, &order); !checked.ok()) {
      std::fprintf(stderr, "jitdump report: %s (no folded stacks, pprof or flame graph written)\n",
                   checked.ToString().c_str());
      req.folded.clear();
      req.pprof.clear();
      req.html.clear();
      ok = false;
    }
  }
  if (!req.folded.empty()) {
    ok &= WriteOutput(req.folded, "folded stacks", [&](std::ostream& out, std::string*) {
      report::WriteFolded(profile, report::FoldedOptions{req.annotate}, out, &order.by_path());
      return true;
    }, dir_of(req.folded));
  }
  report::LineTable table = report::BuildLineTable(profile);
  if (!req.srcline.empty()) {
    ok &= WriteOutput(req.srcline, "per-line table", [&](std::ostream& out, std::string*) {
      report::WriteLineTable(table, req.top, out);
      return true;
    }, dir_of(req.srcline));
  }
  nlohmann::json summary = report::Summary(profile, stats, AgentStats(profile, req.stats_pattern));
  if (!recording.is_null()) summary["recording"] = std::move(recording);
  if (!req.summary.empty()) {
    ok &= WriteOutput(req.summary, "summary", [&](std::ostream& out, std::string*) {
      out << summary.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return true;
    }, dir_of(req.summary));
  }
  if (!req.profile_json.empty()) {
    ok &= WriteOutput(req.profile_json, "profile", [&](std::ostream& out, std::string*) {
      report::WriteProfileJson(profile, out);
      return true;
    }, dir_of(req.profile_json));
  }
  if (!req.pprof.empty()) {
    ok &= WriteOutput(req.pprof, "pprof", [&](std::ostream& out, std::string* why) {
      return WriteStatus(report::WritePprof(profile, out, &order), why);
    }, dir_of(req.pprof));
  }
  if (!req.html.empty()) {
    const std::string title = req.title.empty() ? "jitdump report: " + std::string(BaseName(req.input.empty() ? req.script : req.input))
                                                : req.title;
    ok &= WriteOutput(req.html, "flame graph", [&](std::ostream& out, std::string* why) {
      report::FlameGraphOptions flame;
      flame.title = title;  // several JVMs: a level of process frames keeps their stacks apart (the default)
      return WriteStatus(report::WriteFlameGraphHtml(profile, flame, out, &order), why);
    }, dir_of(req.html));
  }
  if (!req.quiet) {
    size_t jvms = 0;
    for (const report::Process& p : profile.processes) jvms += !p.dump.empty();
    std::fprintf(stderr,
                 "jitdump report: %" PRIu64 " samples, %.2f%% named, %.2f%% of %" PRIu64
                 " compiled-Java samples with a source line, %.2f%% interpreted; %zu JVM%s, %" PRIu64
                 " JIT frames (%" PRIu64 " named, %" PRIu64 " from inline records)\n",
                 stats.samples, summary.value("named_percent", 0.0), summary.value("java_with_line_percent", 0.0),
                 table.java, summary.value("interpreted_percent", 0.0), jvms, jvms == 1 ? "" : "s", stats.jit_frames,
                 stats.jit_resolved, stats.jit_expanded);
    for (const nlohmann::json& p : summary["processes"]) {
      if (!p.value("jvm", false)) continue;
      std::fprintf(stderr,
                   "  JVM %u (%s): %" PRIu64 " samples, %.2f%% of its JIT samples named, %.2f%% of %" PRIu64
                   " compiled-Java samples with a source line, %.2f%% interpreted; %s%s\n",
                   p.value("pid", 0u), Printable(p.value("command", std::string())).c_str(),
                   p.value("samples", uint64_t{0}), p.value("jit_named_percent", 0.0),
                   p.value("java_with_line_percent", 0.0), p.value("java", uint64_t{0}),
                   p.value("interpreted_percent", 0.0), Printable(p.value("dump", std::string())).c_str(),
                   p.contains("agent_stats") ? " (with agent stats)" : "");
    }
  }
  return ok ? kExitOk : kExitInvalid;
}

int Report(const Invocation& in) {
  report::TuneMallocForBatchRun();
  ReportRequest req;
  auto take = [&](std::string_view name, std::string* field) {
    if (const std::string* v = in.Value(name)) *field = *v;
  };
  take("-o,--output", &req.out_dir);
  take("--folded", &req.folded);
  take("--srcline", &req.srcline);
  take("--summary", &req.summary);
  take("--pprof", &req.pprof);
  take("--html", &req.html);
  take("--profile-json", &req.profile_json);
  take("--stats", &req.stats_pattern);
  take("--event", &req.event);
  take("--title", &req.title);
  take("--script", &req.script);
  req.dump_dirs = in.Values("--dumps");
  req.annotate = in.Flag("--annotate");
  req.quiet = in.Flag("-q,--quiet");
  if (const std::string* top = in.Value("--top")) {
    if (top->empty() || top->size() > 9 || top->find_first_not_of("0123456789") != std::string::npos) {
      return in.UsageError("report: --top needs a number");
    }
    req.top = std::stoul(*top);
  }
  if (const std::string* mib = in.Value("--dump-memory")) {
    if (mib->empty() || mib->size() > 7 || mib->find_first_not_of("0123456789") != std::string::npos || *mib == "0") {
      return in.UsageError("report: --dump-memory needs a number of MiB (1 to 9999999)");
    }
    req.dump_memory_mib = std::stoull(*mib);
  }
  if (!in.operands.empty()) req.input = in.operands[0];
  if (req.input.empty() && req.script.empty()) return in.UsageError("report takes one PERF.DATA or --script FILE");
  if (!req.script.empty() && req.input == "-") return in.UsageError("report: with --script, PERF.DATA is the recording's file, not '-'");
  return RunReport(std::move(req));
}

}  // namespace

extern const Command kReportCommand{
    .name = "report",
    .synopsis = "report PERF.DATA",
    .summary = "folded stacks, per-line table, JSON summary, pprof, flame graph from a perf recording",
    .usage = kUsage,
    .min_operands = 0,
    .operands = "at most one PERF.DATA",
    .options = kOptions,
    .run = Report,
};

}  // namespace jitdump::tool
