#include "jitdump/tool/report_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jitdump/report/dump_locator.h"
#include "jitdump/report/folded.h"
#include "jitdump/report/line_stream.h"
#include "jitdump/report/line_table.h"
#include "jitdump/report/perf_recording.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile_json.h"
#include "jitdump/report/profile_reader.h"
#include "jitdump/report/summary.h"
#include "jitdump/tool/report_outputs.h"

namespace jitdump::tool {

const char kReportUsage[] =
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
    "  --dumps DIR        also look for jit-<pid>.dump in DIR (repeatable): dumps copied from\n"
    "                     containers (scripts/collect watch names them by the host pid; a copy\n"
    "                     named by the container's pid works when that pid is unique)\n"
    "  --stats PATTERN    the agents' stats= files, %p standing for the JVM's pid\n"
    "  --top N            rows of the per-line table (default: all in files, 40 on stdout)\n"
    "  --event NAME       only this event's samples (default: the first event recorded)\n"
    "  --title TEXT       the flame graph's title\n"
    "  --perf PATH        the perf binary (default: $PERF, else perf)\n"
    "  --script FILE      read `perf script --show-mmap-events --show-task-events --ns --no-inline\n"
    "                     -F comm,pid,tid,time,period,event,ip,sym,dso` text instead of running perf\n"
    "  -q, --quiet        no summary line on stderr\n"
    "Without -o and per-output options, prints the per-line table. Each JVM's dump is found from the\n"
    "marker mmap its agent made (the path is in the recording), then in the --dumps directories.\n"
    "Record with perf record -k 1 so sample times are the dumps' clock; with -g and\n"
    "-XX:+PreserveFramePointer for whole Java stacks.\n"
    "exit status: 0 ok, 1 an output could not be written, 2 usage error or unreadable recording\n";

namespace {

using report::Profile;

int UsageError(const std::string& message) {
  std::fprintf(stderr, "jitdump report: %s\n%s", message.c_str(), kReportUsage);
  return 2;
}

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

}  // namespace

int RunReport(const ReportRequest& request) {
  ReportRequest req = request;
  if (req.input.empty() == req.script.empty()) return UsageError("give one PERF.DATA or --script FILE");
  if (!req.out_dir.empty()) {
    if (mkdir(req.out_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "jitdump report: cannot create %s: %s\n", req.out_dir.c_str(), std::strerror(errno));
      return 1;
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
  if (req.script.empty()) {
    recording = std::make_unique<report::PerfRecording>(req.perf, req.input);
    if (!recording->ReadShape(&shape, &error) || !recording->ReadSideBand(side_band, &error)) {
      std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
      return 2;
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
      return 2;
    }
  }
  // Dumps in --dumps directories that no marker names (the agent's marker mapping failed, or
  // the script has no side-band events) describe the pid of their name.
  const bool no_events = processes.commands().empty() && processes.markers().empty();
  for (auto& [pid, path] : report::DumpsInDirectories(req.dump_dirs)) {
    if (!processes.HasMarker(pid) && (no_events || processes.commands().count(pid) != 0)) {
      processes.AddMarker(pid, pid, path);
    }
  }

  report::ReadOptions options;
  options.dump_dirs = req.dump_dirs;
  options.return_addresses_adjusted = shape.dwarf_call_chains;
  options.times_are_dump_clock = shape.monotonic_clock;
  options.event = req.event;
  report::ProfileReader reader(processes, options);
  EventsAndSamples from_stdin(processes, reader);
  const bool read = recording              ? recording->ReadSamples(shape, reader, &error)
                    : req.script == "-"    ? ReadScriptFile(req.script, from_stdin, &error)
                                           : ReadScriptFile(req.script, reader, &error);
  if (!read) {
    std::fprintf(stderr, "jitdump report: %s\n", error.c_str());
    return 2;
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
      return WritePprofOutput(profile, out, why);
    });
  }
  if (!req.html.empty()) {
    const std::string title = req.title.empty() ? "jitdump report: " + Basename(req.input.empty() ? req.script : req.input)
                                                : req.title;
    ok &= WriteOutput(req.html, "flame graph", [&](std::ostream& out, std::string* why) {
      return WriteFlameGraphOutput(profile, title, out, why);
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
  return ok ? 0 : 1;
}

int ReportMain(int argc, char** argv, int first) {
  ReportRequest req;
  if (const char* perf = std::getenv("PERF"); perf != nullptr && *perf != '\0') req.perf = perf;
  std::vector<std::string> operands;
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string* field) {
      if (i + 1 >= argc) return false;
      *field = argv[++i];
      return true;
    };
    if (options_done || a.empty() || a[0] != '-' || a == "-") {
      operands.emplace_back(a);
      continue;
    }
    std::string number;
    if (a == "--") {
      options_done = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kReportUsage, stdout);
      return 0;
    } else if (a == "--annotate") {
      req.annotate = true;
    } else if (a == "-q" || a == "--quiet") {
      req.quiet = true;
    } else if (a == "-o" || a == "--output") {
      if (!value(&req.out_dir)) return UsageError(std::string(a) + " needs a directory");
    } else if (a == "--folded" || a == "--srcline" || a == "--summary" || a == "--pprof" || a == "--html" ||
               a == "--profile-json") {
      std::string* field = a == "--folded"    ? &req.folded
                           : a == "--srcline" ? &req.srcline
                           : a == "--summary" ? &req.summary
                           : a == "--pprof"   ? &req.pprof
                           : a == "--html"    ? &req.html
                                              : &req.profile_json;
      if (!value(field)) return UsageError(std::string(a) + " needs a file");
    } else if (a == "--dumps") {
      std::string dir;
      if (!value(&dir)) return UsageError("--dumps needs a directory");
      req.dump_dirs.push_back(dir);
    } else if (a == "--stats") {
      if (!value(&req.stats_pattern)) return UsageError("--stats needs a pattern");
    } else if (a == "--top") {
      if (!value(&number) || number.empty() || number.size() > 9 ||
          number.find_first_not_of("0123456789") != std::string::npos) {
        return UsageError("--top needs a number");
      }
      req.top = std::stoul(number);
    } else if (a == "--event") {
      if (!value(&req.event)) return UsageError("--event needs an event name");
    } else if (a == "--title") {
      if (!value(&req.title)) return UsageError("--title needs a text");
    } else if (a == "--perf") {
      if (!value(&req.perf)) return UsageError("--perf needs a path");
    } else if (a == "--script") {
      if (!value(&req.script)) return UsageError("--script needs a file");
    } else {
      return UsageError("unknown option " + std::string(a));
    }
  }
  if (operands.size() > 1) return UsageError("one PERF.DATA at most");
  if (!operands.empty()) req.input = operands[0];
  return RunReport(req);
}

}  // namespace jitdump::tool
