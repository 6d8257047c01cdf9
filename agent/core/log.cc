// One-line messages on stderr (log.h).
#include "agent/core/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <new>

namespace jitdump_agent {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed); }

void Log(LogLevel level, const char* format, ...) {
  if (!LogEnabled(level)) return;
  char buf[2048];
  int n = std::snprintf(buf, sizeof buf, "jitdumpagent: %s: ", LevelName(level));
  va_list args;
  va_start(args, format);
  const int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, format, args);
  va_end(args);
  n = m < 0 ? n : std::min<int>(n + m, static_cast<int>(sizeof buf) - 2);
  buf[n++] = '\n';
  (void)!::write(STDERR_FILENO, buf, static_cast<size_t>(n));
}

namespace {

const char* Describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (...) {
    return "internal error";
  }
}

}  // namespace

void WarnFailure(WarnOnce& once, const char* what, const std::exception_ptr& error) {
  if (once.First()) {
    Log(LogLevel::kWarn, "%s failed (%s); the agent counts what it drops and carries on", what, Describe(error));
  }
}

}  // namespace jitdump_agent
