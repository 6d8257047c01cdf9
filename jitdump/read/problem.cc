// Problems found in a dump (problem.h): their text and how they are added.
#include "jitdump/read/problem.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace jitdump {

const char* SeverityName(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

std::string FormatProblem(const Problem& problem) {
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "offset %" PRIu64 " (0x%" PRIx64 "): %s: ", problem.offset, problem.offset,
                SeverityName(problem.severity));
  return prefix + problem.message;
}

void AddProblem(std::vector<Problem>& problems, uint64_t offset, Severity severity, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  problems.push_back(Problem{offset, severity, message});
}

}  // namespace jitdump
