// What `jitdump report` asks perf about a perf.data file, and how: `perf evlist -v` for the
// recording's shape, one quick perf script pass for the side-band events (where each JVM mapped
// its dump, exits, execs), then the streamed pass over the samples.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jitdump/report/perf_script.h"

namespace jitdump::report {

struct RecordedEvent {
  std::string name;         // "cpu-clock"
  std::string sample_type;  // "IP|TID|TIME|CALLCHAIN|PERIOD"
  bool use_clockid = false;
  int clockid = -1;
};

// `perf evlist -v` output, one line per event:
// "cpu-clock: type: 1, size: 128, ..., sample_type: IP|TID|TIME|CALLCHAIN|PERIOD, ..., clockid: 1".
std::vector<RecordedEvent> ParseEvlist(std::string_view text);

struct RecordingShape {
  std::vector<RecordedEvent> events;
  // Call chains unwound from stack copies (--call-graph dwarf): perf has already moved their
  // return addresses onto the call instruction.
  bool dwarf_call_chains = false;
  // Recorded with -k 1 (CLOCK_MONOTONIC, the dumps' clock) for every event.
  bool monotonic_clock = false;
  bool has_time = false;
};
RecordingShape ShapeOf(const std::vector<RecordedEvent>& events);

class PerfRecording {
 public:
  PerfRecording(std::string perf, std::string data) : perf_(std::move(perf)), data_(std::move(data)) {}

  bool ReadShape(RecordingShape* shape, std::string* error) const;
  // Every MMAP, COMM, FORK and EXIT event (no samples), in time order.
  bool ReadSideBand(ScriptSink& sink, std::string* error) const;
  // Every sample, in time order, with the fields the parser expects (kScriptFields).
  bool ReadSamples(const RecordingShape& shape, ScriptSink& sink, std::string* error) const;

 private:
  bool Stream(const std::vector<std::string>& args, ScriptSink& sink, uint64_t* events, std::string* error) const;

  std::string perf_;
  std::string data_;
};

}  // namespace jitdump::report
