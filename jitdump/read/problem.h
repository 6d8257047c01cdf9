// A defect found in a dump: where it is (a byte offset in the file), how bad it is, and what it
// is. The decoder reports what stops it from reading a record; the consumer rules add what perf
// 6.1 and samply would object to. Both speak through this one type, so `jitdump check` can sort
// and print them together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jitdump {

enum class Severity { kWarning, kError };

struct Problem {
  uint64_t offset = 0;  // byte offset in the file the problem is about
  Severity severity = Severity::kError;
  std::string message;
};

const char* SeverityName(Severity severity);  // "error" / "warning"

// "offset 1234 (0x4d2): error: ..."
std::string FormatProblem(const Problem& problem);

// Appends a problem whose message is formatted printf-style (messages carry the numbers that
// explain them: sizes, offsets, indexes).
void AddProblem(std::vector<Problem>& problems, uint64_t offset, Severity severity, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace jitdump
