// `jitdump report`: a perf recording and the dumps of its JVMs in, every report output out
// (folded stacks, the per-line table, the JSON summary, pprof and the HTML flame graph).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace jitdump::tool {

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
  size_t top = 0;                // rows of the per-line table (0: all)
  std::string event;             // only this event's samples
  std::string title;             // of the flame graph
  bool quiet = false;
};

extern const char kReportUsage[];

// Runs the report; returns the exit code: 0 ok, 1 an output could not be written, 2 usage error
// or a recording perf could not read (the tool's convention: 2 for an unreadable input).
int RunReport(const ReportRequest& request);

// `jitdump report ARGS...` with argv[first] the first argument after "report".
int ReportMain(int argc, char** argv, int first);

}  // namespace jitdump::tool
