// Samples per Java source line: where the CPU time of Java code goes, line by line, from the
// innermost frame of each sample (an inlined callee's own line, not its caller's). Compiled and
// interpreted code of one line are rows of their own (an interpreted frame has a line when the
// stack walk named it: perf-java --interp). Samples outside Java code are grouped by what they
// are, so the table accounts for all of them.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "jitdump/report/profile.h"

namespace jitdump::report {

struct LineRow {
  // "demo/Demo.java:26" (the file as the dump names it, with its package path) for a Java line;
  // "[interpreter]", "[jit stubs]", "[java, no line]", "[kernel]", "[libjvm.so]", "[unknown]" for
  // samples without one.
  std::string key;
  bool java_line = false;
  bool interpreted = false;  // a line of interpreted code (its method is shown "[interpreted]")
  uint64_t samples = 0;
  std::string method;       // the function at that line with the most samples
  std::string compiled_in;  // the compiled method it was inlined into, when it was (most samples)
  uint64_t inlined = 0;     // samples of the line in code inlined into another method
};

struct LineTable {
  uint64_t samples = 0;
  uint64_t java = 0;            // samples whose innermost frame is Java code
  uint64_t java_with_line = 0;  // ... with a source line
  uint64_t interpreted = 0;
  uint64_t interpreted_with_line = 0;  // interpreted samples whose method and line the walk named
  std::vector<LineRow> rows;  // most samples first, then by key
};

LineTable BuildLineTable(const Profile& profile);

// The table as text: two "# " summary lines (the first counts the samples, the Java and the
// interpreted ones, the second is
// "# java_srcline_share: P% of the samples in compiled Java methods have a File.java:N"),
// a "# " header, then "  SHARE%  SAMPLES  KEY  METHOD [(inlined into COMPILED)]" rows ("(N
// inlined into COMPILED)" when only N of the line's samples ran inlined; "METHOD [interpreted]"
// for a line of interpreted code); `top` rows at most (0: all).
void WriteLineTable(const LineTable& table, size_t top, std::ostream& out);

}  // namespace jitdump::report
