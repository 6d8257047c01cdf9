// What the report needs to know about how a recording was made, whatever read it.
#pragma once

#include <string>
#include <vector>

namespace jitdump::report {

struct RecordedEvent {
  std::string name;         // "cpu-clock"
  std::string sample_type;  // "IP|TID|TIME|CALLCHAIN|PERIOD"
  bool use_clockid = false;
  int clockid = -1;
};

struct RecordingShape {
  std::vector<RecordedEvent> events;
  // Call chains unwound from stack copies (--call-graph dwarf): their return addresses are
  // already moved onto the call instruction.
  bool dwarf_call_chains = false;
  // Recorded with -k 1 (CLOCK_MONOTONIC, the dumps' clock) for every event.
  bool monotonic_clock = false;
  bool has_time = false;
};

}  // namespace jitdump::report
