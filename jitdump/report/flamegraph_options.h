// What the HTML flame graph shows; set by `jitdump report` from its command line.
#pragma once

#include <string>

namespace jitdump::report {

struct FlameGraphOptions {
  std::string title = "CPU flame graph";
  // A level of process frames ("java [1234]") under the root: always, or (false) only when the
  // profile holds more than one process, where stacks of different JVMs must not merge.
  bool process_level = false;
  // A level of thread frames (perf's comm of the sampled thread) under each process.
  bool thread_level = false;
  // Frames with fewer than this share of all samples (0.001 = 0.1 %) are left out of the page;
  // their samples stay in their parent's width. 0 keeps every frame.
  double min_share = 0;
};

}  // namespace jitdump::report
