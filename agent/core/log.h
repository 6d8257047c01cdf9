// One-line messages on stderr, "jitdumpagent: warning: ...". Each message is a single write(2),
// so lines from several threads never interleave. No allocation beyond a stack buffer.
#pragma once

#include <atomic>
#include <exception>

#include "agent/core/options.h"

namespace jitdump_agent {

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

// For conditions that could repeat per event: prints the first time only.
class WarnOnce {
 public:
  bool First() { return !fired_.exchange(true, std::memory_order_relaxed); }

 private:
  std::atomic<bool> fired_{false};
};

// A failure thrown on the writer (`error`: an allocation failure or anything else), in one
// warning per WarnOnce: "WHAT failed (out of memory); the agent counts what it drops and carries on".
void WarnFailure(WarnOnce& once, const char* what, const std::exception_ptr& error);

}  // namespace jitdump_agent
