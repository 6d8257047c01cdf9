#include "jitdump/report/perf_recording.h"

#include <cerrno>
#include <charconv>

#include "jitdump/report/line_stream.h"
#include "jitdump/format/text.h"

namespace jitdump::report {
namespace {

// Counts events and passes everything on.
class CountingSink : public ScriptSink {
 public:
  CountingSink(ScriptSink& next, uint64_t* events) : next_(next), events_(events) {}
  void OnSample(const ScriptSample& sample) override { next_.OnSample(sample); }
  void OnEvent(const ScriptEvent& event) override {
    ++*events_;
    next_.OnEvent(event);
  }

 private:
  ScriptSink& next_;
  uint64_t* events_;
};

// A sink that drops samples: the side-band pass only wants events.
class EventsOnly : public ScriptSink {
 public:
  explicit EventsOnly(ScriptSink& next) : next_(next) {}
  void OnSample(const ScriptSample&) override {}
  void OnEvent(const ScriptEvent& event) override { next_.OnEvent(event); }

 private:
  ScriptSink& next_;
};

std::string NotFoundHint(const std::string& error) {
  if (error.find("No such file") == std::string::npos) return error;
  return error + " (is perf installed? Debian: apt-get install linux-perf; or give --perf PATH)";
}

}  // namespace

std::vector<RecordedEvent> ParseEvlist(std::string_view text) {
  std::vector<RecordedEvent> events;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = TrimSpace(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t type = line.find(": type: ");
    if (line.empty() || line[0] == '#' || type == std::string_view::npos) continue;
    RecordedEvent event;
    event.name = std::string(line.substr(0, type));
    // "key: value" pairs separated by ", " (the "{ sample_period, sample_freq }" key splits in
    // two harmlessly: neither half is a key read here).
    std::string_view rest = line.substr(type + 2);
    while (!rest.empty()) {
      const size_t comma = rest.find(", ");
      const std::string_view pair = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
      const size_t colon = pair.find(": ");
      if (colon == std::string_view::npos) continue;
      const std::string_view key = TrimSpace(pair.substr(0, colon));
      const std::string_view value = TrimSpace(pair.substr(colon + 2));
      if (key == "sample_type") event.sample_type = std::string(value);
      if (key == "use_clockid") event.use_clockid = value == "1";
      // A value that is no number (another perf's output, a damaged file) leaves the clock
      // unknown, as if no clockid were given: never an exception.
      if (key == "clockid") {
        int clockid = -1;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), clockid);
        event.clockid = ec == std::errc() && end == value.data() + value.size() ? clockid : -1;
      }
    }
    events.push_back(std::move(event));
  }
  return events;
}

RecordingShape ShapeOf(const std::vector<RecordedEvent>& events) {
  RecordingShape shape;
  shape.events = events;
  shape.monotonic_clock = !events.empty();
  shape.has_time = !events.empty();
  for (const RecordedEvent& e : events) {
    auto has = [&](std::string_view flag) {
      const std::string_view types = e.sample_type;
      size_t pos = 0;
      while (pos <= types.size()) {
        const size_t bar = types.find('|', pos);
        if (types.substr(pos, bar - pos) == flag) return true;
        if (bar == std::string_view::npos) break;
        pos = bar + 1;
      }
      return false;
    };
    if (has("STACK_USER")) shape.dwarf_call_chains = true;
    if (!has("TIME")) shape.has_time = false;
    if (!e.use_clockid || e.clockid != 1) shape.monotonic_clock = false;  // CLOCK_MONOTONIC is 1
  }
  return shape;
}

bool PerfRecording::ReadShape(RecordingShape* shape, std::string* error) const {
  std::string text;
  const bool ok = ForEachOutputLine({perf_, "evlist", "-v", "-i", data_},
                                    [&](std::string_view line) { (text += line) += '\n'; }, error);
  if (!ok) {
    *error = "perf evlist -v -i " + data_ + ": " + NotFoundHint(*error);
    return false;
  }
  *shape = ShapeOf(ParseEvlist(text));
  if (shape->events.empty()) {
    *error = "perf evlist -v -i " + data_ + " listed no events (not a perf.data file?)";
    return false;
  }
  return true;
}

bool PerfRecording::Stream(const std::vector<std::string>& args, ScriptSink& sink, uint64_t* events,
                           std::string* error) const {
  CountingSink counting(sink, events);
  ScriptParser counted(counting);
  std::vector<std::string> argv{perf_, "script", "-i", data_};
  argv.insert(argv.end(), args.begin(), args.end());
  const bool ok = ForEachOutputLine(argv, [&](std::string_view line) { counted.Feed(line); }, error);
  counted.Finish();
  if (!ok) {
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
    *error = command + ": " + NotFoundHint(*error);
  }
  return ok;
}

bool PerfRecording::ReadSideBand(ScriptSink& sink, std::string* error) const {
  // A time window no sample falls in (CLOCK_MONOTONIC 31 years after boot) leaves perf script
  // printing only the side-band events, which it does not filter by time: 5x faster than a
  // pass over every sample. Should a perf filter those too, nothing but the kernel's own mmap
  // would be missing; then read them again without the window.
  EventsOnly events_only(sink);
  uint64_t events = 0;
  const std::vector<std::string> common{"--show-mmap-events", "--show-task-events", "-F", "pid,tid,time", "--ns"};
  std::vector<std::string> windowed = common;
  windowed.insert(windowed.end(), {"--time", "999999999.000000000,999999999.000000001"});
  if (!Stream(windowed, events_only, &events, error)) return false;
  if (events > 0) return true;
  return Stream(common, events_only, &events, error);
}

bool PerfRecording::ReadSamples(const RecordingShape& shape, ScriptSink& sink, std::string* error) const {
  uint64_t events = 0;
  // perf script refuses a field the recording lacks: a recording without times (perf record
  // --no-time... or -T off) gets no time field, and JIT frames resolve to the final code map.
  std::string fields = kScriptFields;
  if (!shape.has_time) fields.replace(fields.find(",time"), 5, "");
  // --no-inline: perf would run addr2line on every native frame for inline chains of its own.
  // --max-stack: perf script's default cuts chains at 127 frames, fewer than the kernel may
  // record (kernel.perf_event_max_stack).
  return Stream({"-F", fields, "--ns", "--no-inline", "--max-stack", "65535"}, sink, &events, error);
}

}  // namespace jitdump::report
