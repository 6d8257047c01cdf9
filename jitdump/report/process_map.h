// Which JVM dump describes a process at a given time, from the recording's side-band events:
// the marker mmap each agent makes of its jit-<pid>.dump (perf records it, or synthesizes it
// from /proc when the JVM was already running), and the exits and execs that end a process
// image (pids are reused; `exec java` replaces a shell).
//
// A container's JVM names its dump by its own pid (jit-1.dump) while perf records the host
// pid: a marker keeps both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jitdump/report/perf_script.h"

namespace jitdump::report {

struct DumpMarker {
  uint32_t pid = 0;       // the process as perf saw it (host pid)
  uint32_t dump_pid = 0;  // the N of jit-N.dump: the JVM's own pid (its namespace's)
  uint64_t time = 0;      // when perf saw the mapping (0 for mappings perf synthesized)
  std::string path;       // the path the JVM mapped, as it saw it
};

// "/x/jit-1234.dump" -> 1234; false for other names (perf's own rule: "jit-", digits, ".dump").
bool DumpFileName(std::string_view path, uint32_t* dump_pid);

class ProcessMap {
 public:
  // Feed every side-band event in recording order.
  void OnEvent(const ScriptEvent& event);
  // A dump found without a marker (a --dumps directory holds jit-<pid>.dump of a process the
  // recording saw): it describes the pid from its first event on.
  void AddMarker(uint32_t pid, uint32_t dump_pid, std::string path);

  const std::vector<DumpMarker>& markers() const { return markers_; }
  bool HasMarker(uint32_t pid) const { return by_pid_.count(pid) != 0; }
  // Pids the recording's events mention (forks, comms, mmaps).
  const std::map<uint32_t, std::string>& commands() const { return commands_; }

  // The marker (index into markers()) whose dump describes `pid` at `time`, or -1: the latest
  // marker at or before `time` with no exit or exec of the process in between; failing that
  // (a sample taken before a late attach mapped the dump) the first later marker with no exit
  // or exec in between. Without a time, the pid's last marker. O(log n) in the pid's markers
  // and exits: a process that execs itself thousands of times, mapping its dump each time,
  // costs the report near-linear time, not cubic.
  int64_t MarkerFor(uint32_t pid, std::optional<uint64_t> time) const;

  // MarkerFor(pid, time) and the times around `time` it is the answer for: [from, until), the
  // stretch between the pid's markers and exits or execs (MarkerFor changes only at those). A
  // reader asks once per stretch instead of once per sample, while generation() stays the same.
  struct MarkerSpan {
    int64_t marker = -1;
    uint64_t from = 0;
    uint64_t until = UINT64_MAX;
  };
  MarkerSpan MarkerSpanFor(uint32_t pid, uint64_t time) const;
  // Changes whenever an event or AddMarker may change what MarkerFor answers.
  uint64_t generation() const { return generation_; }

  // The process's command (its main thread's comm), or "".
  std::string CommandOf(uint32_t pid) const;
  // The executable the process runs: the first executable file it mapped after its last exec
  // (the kernel maps the program before its interpreter, ld.so; perf synthesizes a running
  // process's mappings in address order, the program's first), its parent's after a fork
  // without exec; "" when the recording does not say.
  std::string ExecutableOf(uint32_t pid) const;

 private:
  struct PidMarkers {
    std::vector<size_t> order;                    // marker indexes, in time order
    std::map<std::string, size_t> latest_by_path;  // the latest marker of each dump path
  };
  void AddBoundary(uint32_t pid, uint64_t time);
  // Whether the process exited or exec'd in (after, until].
  bool BoundaryBetween(uint32_t pid, uint64_t after, uint64_t until) const;

  std::vector<DumpMarker> markers_;
  std::map<uint32_t, PidMarkers> by_pid_;
  std::map<uint32_t, std::vector<uint64_t>> boundaries_;  // exit and exec times per pid, sorted
  std::map<uint32_t, std::string> commands_;
  std::map<uint32_t, std::string> executables_;
  uint64_t generation_ = 0;
};

}  // namespace jitdump::report
