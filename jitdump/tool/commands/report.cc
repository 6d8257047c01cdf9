// `jitdump report PERF.DATA`: a perf recording and the dumps of its JVMs in, every report output
// out (folded stacks, the per-line table, the JSON summary, pprof and the HTML flame graph). The
// reading is jitdump/report/ (perf_recording.h runs perf; profile_reader.h builds the Profile);
// this file picks the outputs and writes them.
#include <sys/stat.h>

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

#include "jitdump/report/dump_locator.h"
#include "jitdump/report/flamegraph_writer.h"
#include "jitdump/report/folded.h"
#include "jitdump/report/line_stream.h"
#include "jitdump/report/line_table.h"
#include "jitdump/report/perf_data_source.h"
#include "jitdump/report/perf_recording.h"
#include "jitdump/report/pprof_writer.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile_json.h"
#include "jitdump/report/profile_reader.h"
#include "jitdump/report/summary.h"
#include "jitdump/tool/command.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump report [OPTIONS] PERF.DATA\n"
    "       jitdump report [OPTIONS] --script FILE\n"
    "Reads a perf recording (raw perf.data: no perf inject needed) and the jitdumps of the JVMs in\n"
    "it, names every JIT frame by address and time, expands inlined frames, and writes:\n"
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
    "                     dumps copied from containers (scripts/collect watch names them by the\n"
    "                     host pid; a copy named by the container's pid works when that pid is\n"
    "                     unique or the recording names its jit-<pid>-N subdirectory)\n"
    "  --stats PATTERN    the agents' stats= files, %p standing for the JVM's pid\n"
    "  --top N            rows of the per-line table (default: all in files, 40 on stdout)\n"
    "  --event NAME       only this event's samples (default: the first event recorded)\n"
    "  --title TEXT       the flame graph's title\n"
    "  --perf PATH        the perf binary (default: $PERF, else perf)\n"
    "  --reader WHICH     perf-script (runs perf) or perfdata (reads perf.data itself, no perf)\n"
    "  --script FILE      read `perf script --show-mmap-events --show-task-events --ns --no-inline\n"
    "                     -F comm,pid,tid,time,period,event,ip,sym,dso` text instead of running perf\n"
    "  -q, --quiet        no summary line on stderr\n"
    "Without -o and per-output options, prints the per-line table. Each JVM's dump is found from the\n"
    "marker mmap its agent made (the path is in the recording), then in the --dumps directories.\n"
    "Record with perf record -k 1 so sample times are the dumps' clock; with -g and\n"
    "-XX:+PreserveFramePointer for whole Java stacks.\n"
    "exit status: 0 ok, 1 an output could not be written, 2 usage error or unreadable recording\n";

constexpr OptionSpec kOptions[] = {
    {"-o,--output", "DIR"},  {"--folded", "FILE"},    {"--srcline", "FILE"}, {"--summary", "FILE"},
    {"--pprof", "FILE"},     {"--html", "FILE"},      {"--profile-json", "FILE"},
    {"--annotate", ""},      {"--dumps", "DIR", true}, {"--stats", "PATTERN"}, {"--top", "N"},
    {"--event", "NAME"},     {"--title", "TEXT"},     {"--perf", "PATH"},    {"--script", "FILE"},
    {"--reader", "WHICH"},
    {"-q,--quiet", ""},
};

struct ReportRequest {
  std::string input;             // perf.data (raw: no perf inject needed)
  std::string script;            // perf script text to read instead of running perf ("-": stdin)
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
  std::string perf = "perf";
  bool perfdata = false;         // read perf.data with jitdump/perfdata instead of running perf
  size_t top = 0;                // rows of the per-line table (0: all)
  std::string event;             // only this event's samples
  std::string title;             // of the flame graph
  bool quiet = false;
};

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

std::string ExpandPid(const std::string& pattern, uint32_t pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
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
      std::ifstream in(ExpandPid(pattern, pid));
      if (!in) continue;
      nlohmann::json stats = nlohmann::json::parse(in, nullptr, false);
      if (!stats.is_discarded()) out[static_cast<uint32_t>(i)] = std::move(stats);
      break;
    }
  }
  return out;
}

// Writes one output to `path` ("-": stdout) through `write`; false (message printed) on failure.
template <typename Write>
bool WriteOutput(const std::string& path, const char* what, Write write) {
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
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::fprintf(stderr, "jitdump report: cannot write %s to %s: %s\n", what, path.c_str(), std::strerror(errno));
    return false;
  }
  if (!write(out, &error)) {
    out.close();
    std::remove(path.c_str());
    std::fprintf(stderr, "jitdump report: %s: %s\n", what, error.c_str());
    return false;
  }
  out.close();
  if (!out) {
    std::fprintf(stderr, "jitdump report: writing %s to %s failed\n", what, path.c_str());
    return false;
  }
  return true;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

int RunReport(ReportRequest req) {
  if (!req.out_dir.empty()) {
    if (mkdir(req.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "jitdump report: cannot create %s: %s\n", req.out_dir.c_str(), std::strerror(errno));
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
  std::unique_ptr<report::PerfRecording> recording;
  std::unique_ptr<report::PerfDataSource> perf_data;
  if (req.script.empty() && req.perfdata) {
    perf_data = report::PerfDataSource::Open(req.input, &error);
    if (!perf_data) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return kExitUsage;
    }
    if (perf_data->rereadable()) {
      perf_data->ReadSideBand(processes);
      shape = perf_data->Shape();
      if (!shape.monotonic_clock) {
        std::fprintf(stderr,
                     "jitdump report: warning: %s was not recorded with -k 1 (CLOCK_MONOTONIC, the dumps' clock): "
                     "JIT frames are named from the code each dump leaves at their address, not the code there "
                     "at the sample's time\n",
                     req.input.c_str());
      }
    }
  } else if (req.script.empty()) {
    recording = std::make_unique<report::PerfRecording>(req.perf, req.input);
    if (!recording->ReadShape(&shape, &error) || !recording->ReadSideBand(side_band, &error)) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return kExitUsage;
    }
    if (!shape.monotonic_clock) {
      std::fprintf(stderr,
                   "jitdump report: warning: %s was not recorded with -k 1 (CLOCK_MONOTONIC, the dumps' clock): "
                   "JIT frames are named from the code each dump leaves at their address, not the code there "
                   "at the sample's time\n",
                   req.input.c_str());
    }
  } else if (req.script != "-") {
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

  report::ReadOptions options;
  options.dump_dirs = req.dump_dirs;
  options.return_addresses_adjusted = shape.dwarf_call_chains;
  options.times_are_dump_clock = shape.monotonic_clock;
  options.event = req.event;
  report::ProfileReader reader(processes, options);
  EventsAndSamples from_stdin(processes, reader);
  bool read = true;
  if (perf_data) {
    perf_data->ReadSamples(reader, perf_data->rereadable() ? nullptr : &processes);
    for (const std::string& warning : perf_data->warnings()) {
      std::fprintf(stderr, "jitdump report: warning: %s: %s\n", req.input.c_str(), warning.c_str());
    }
  } else {
    read = recording            ? recording->ReadSamples(shape, reader, &error)
           : req.script == "-"  ? ReadScriptFile(req.script, from_stdin, &error)
                                : ReadScriptFile(req.script, reader, &error);
  }
  if (!read) {
    std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
    return kExitUsage;
  }
  const report::ReadStats stats = reader.stats();
  Profile profile = reader.Take();
  for (const std::string& warning : stats.warnings) std::fprintf(stderr, "jitdump report: warning: %s\n", warning.c_str());
  for (const auto& [event, n] : stats.skipped_events) {
    std::fprintf(stderr, "jitdump report: %" PRIu64 " samples of event %s left out (--event picks one)\n", n,
                 event.c_str());
  }

  bool ok = true;
  if (!req.folded.empty()) {
    ok &= WriteOutput(req.folded, "folded stacks", [&](std::ostream& out, std::string*) {
      report::WriteFolded(profile, report::FoldedOptions{req.annotate}, out);
      return true;
    });
  }
  report::LineTable table = report::BuildLineTable(profile);
  if (!req.srcline.empty()) {
    ok &= WriteOutput(req.srcline, "per-line table", [&](std::ostream& out, std::string*) {
      report::WriteLineTable(table, req.top, out);
      return true;
    });
  }
  const nlohmann::json summary = report::Summary(profile, stats, AgentStats(profile, req.stats_pattern));
  if (!req.summary.empty()) {
    ok &= WriteOutput(req.summary, "summary", [&](std::ostream& out, std::string*) {
      out << summary.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      return true;
    });
  }
  if (!req.profile_json.empty()) {
    ok &= WriteOutput(req.profile_json, "profile", [&](std::ostream& out, std::string*) {
      report::WriteProfileJson(profile, out);
      return true;
    });
  }
  if (!req.pprof.empty()) {
    ok &= WriteOutput(req.pprof, "pprof", [&](std::ostream& out, std::string* why) {
      return WriteStatus(report::WritePprof(profile, out), why);
    });
  }
  if (!req.html.empty()) {
    const std::string title = req.title.empty() ? "jitdump report: " + Basename(req.input.empty() ? req.script : req.input)
                                                : req.title;
    ok &= WriteOutput(req.html, "flame graph", [&](std::ostream& out, std::string* why) {
      report::FlameGraphOptions flame;
      flame.title = title;  // several JVMs: a level of process frames keeps their stacks apart (the default)
      return WriteStatus(report::WriteFlameGraphHtml(profile, flame, out), why);
    });
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
                   p.value("pid", 0u), p.value("command", std::string()).c_str(), p.value("samples", uint64_t{0}),
                   p.value("jit_named_percent", 0.0), p.value("java_with_line_percent", 0.0),
                   p.value("java", uint64_t{0}), p.value("interpreted_percent", 0.0),
                   p.value("dump", std::string()).c_str(), p.contains("agent_stats") ? " (with agent stats)" : "");
    }
  }
  return ok ? kExitOk : kExitInvalid;
}

int Report(const Invocation& in) {
  ReportRequest req;
  if (const char* perf = std::getenv("PERF"); perf != nullptr && *perf != '\0') req.perf = perf;
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
  take("--perf", &req.perf);
  take("--script", &req.script);
  if (const std::string* which = in.Value("--reader")) {
    if (*which != "perfdata" && *which != "perf-script") return in.UsageError("report: --reader is perfdata or perf-script");
    req.perfdata = *which == "perfdata";
  }
  req.dump_dirs = in.Values("--dumps");
  req.annotate = in.Flag("--annotate");
  req.quiet = in.Flag("-q,--quiet");
  if (const std::string* top = in.Value("--top")) {
    if (top->empty() || top->size() > 9 || top->find_first_not_of("0123456789") != std::string::npos) {
      return in.UsageError("report: --top needs a number");
    }
    req.top = std::stoul(*top);
  }
  if (!in.operands.empty()) req.input = in.operands[0];
  if (req.input.empty() == req.script.empty()) return in.UsageError("report takes one PERF.DATA or --script FILE");
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
