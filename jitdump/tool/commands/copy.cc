// `jitdump copy [--follow] [--pid PID] SOURCE DEST`: copies a jitdump whole records at a time,
// optionally while its producer is still writing it, and optionally stamped with another pid
// (follow_copy.h does the work; scripts/bin/collect runs it for JVMs in containers).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "jitdump/tool/command.h"
#include "jitdump/tool/follow_copy.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump copy [--follow] [--pid PID] [--interval-ms MS] SOURCE DEST\n"
    "Copies the jitdump SOURCE to DEST (a new file; - for standard output) whole records at a\n"
    "time: a record its producer is still writing, or the torn tail of one that died, is never\n"
    "copied.\n"
    "  --follow          keep copying what the producer appends, every MS milliseconds (default\n"
    "                    100), until standard input reaches end of file or SIGINT/SIGTERM; then\n"
    "                    copy what is there one last time and stop\n"
    "  --pid PID         write PID into the header and into the pid and tid of every CODE_LOAD\n"
    "                    and CODE_MOVE (how a container's dump gets its host pid for perf)\n"
    "Prints what it copied (to standard error when DEST is standard output).\n"
    "exit status: 0 copied, 1 SOURCE is not a jitdump, 2 usage or I/O error\n";

constexpr OptionSpec kOptions[] = {{"--follow", ""}, {"--pid", "PID"}, {"--interval-ms", "MS"}};

volatile sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

bool ParseU32(const std::string& text, uint32_t* value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end && !text.empty();
}

// Waits up to `interval_ms` for standard input; true once it is at end of file (or gone).
bool InputEnded(int interval_ms) {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  const int ready = ::poll(&fd, 1, interval_ms);
  if (ready <= 0) return ready < 0 && errno != EINTR;
  if (fd.revents & (POLLERR | POLLNVAL)) return true;
  char discard[512];
  const ssize_t n = ::read(STDIN_FILENO, discard, sizeof discard);
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

int Copy(const Invocation& in) {
  FollowCopyOptions options;
  if (const std::string* pid = in.Value("--pid")) {
    uint32_t value = 0;
    if (!ParseU32(*pid, &value) || value == 0) return in.UsageError("--pid wants a process id, not '" + Shown(*pid) + "'");
    options.pid = value;
  }
  uint32_t interval_ms = 100;
  if (const std::string* interval = in.Value("--interval-ms")) {
    if (!ParseU32(*interval, &interval_ms) || interval_ms == 0 || interval_ms > 60000) {
      return in.UsageError("--interval-ms wants 1 to 60000, not '" + Shown(*interval) + "'");
    }
  }
  const std::string& source_path = in.operands[0];
  const std::string& dest_path = in.operands[1];
  const int source = ::open(source_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (source < 0) {
    std::fprintf(stderr, "jitdump copy: %s: %s\n", Shown(source_path).c_str(), std::strerror(errno));
    return kExitUsage;
  }
  const bool to_stdout = dest_path == "-";
  // A new file only: never truncate or follow someone else's file into place.
  const int dest = to_stdout ? STDOUT_FILENO
                             : ::open(dest_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (dest < 0) {
    std::fprintf(stderr, "jitdump copy: %s: %s\n", Shown(dest_path).c_str(), std::strerror(errno));
    ::close(source);
    return kExitUsage;
  }
  if (in.Flag("--follow")) {
    struct sigaction action {};
    action.sa_handler = OnStopSignal;  // no SA_RESTART: the wait in poll() ends at once
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
  }

  FollowCopy copy(source, dest, options);
  std::string error;
  bool ok = copy.CopyAvailable(&error);
  if (in.Flag("--follow")) {
    while (ok && !g_stop && !InputEnded(static_cast<int>(interval_ms))) ok = copy.CopyAvailable(&error);
    if (ok) ok = copy.CopyAvailable(&error);  // what the producer wrote last
  }
  ::close(source);
  if (!to_stdout && ::close(dest) != 0 && ok) {
    ok = false;
    error = std::string("close: ") + std::strerror(errno);
  }
  std::FILE* report = to_stdout ? stderr : stdout;
  std::fprintf(report, "%s: %" PRIu64 " records (%" PRIu64 " bytes) copied to %s", Shown(source_path).c_str(),
               copy.records(), copy.bytes(), Shown(dest_path).c_str());
  if (copy.pending_bytes() != 0) std::fprintf(report, "; %" PRIu64 " bytes after the last whole record left out", copy.pending_bytes());
  std::fprintf(report, "\n");
  if (!ok) {
    std::fprintf(stderr, "jitdump copy: %s: %s\n", Shown(source_path).c_str(), error.c_str());
    return error.rfind("not a jitdump", 0) == 0 || error.rfind("header size", 0) == 0 ? kExitInvalid : kExitUsage;
  }
  return kExitOk;
}

}  // namespace

extern const Command kCopyCommand{
    .name = "copy",
    .synopsis = "copy SOURCE DEST",
    .summary = "copy a (growing) dump whole records at a time, optionally with another pid",
    .usage = kUsage,
    .json = JsonMode::kNone,
    .min_operands = 2,
    .max_operands = 2,
    .operands = "SOURCE and DEST",
    .options = kOptions,
    .run = Copy,
};

}  // namespace jitdump::tool
