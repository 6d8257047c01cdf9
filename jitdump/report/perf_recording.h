// What `jitdump report` asks perf about a perf.data file, and how: `perf evlist -v` for the
// recording's shape, one quick perf script pass for the side-band events (where each JVM mapped
// its dump, exits, execs), then the streamed pass over the samples.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jitdump/report/perf_script.h"
#include "jitdump/report/recording_shape.h"

namespace jitdump::report {

// `perf evlist -v` output, one line per event:
// "cpu-clock: type: 1, size: 128, ..., sample_type: IP|TID|TIME|CALLCHAIN|PERIOD, ..., clockid: 1".
std::vector<RecordedEvent> ParseEvlist(std::string_view text);

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
