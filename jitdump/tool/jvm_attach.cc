// Running jattach without handing it anything of the caller's session (jvm_attach.h).
#include "jitdump/tool/jvm_attach.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace jitdump::tool {
namespace {

int64_t NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::optional<int> NumberAfter(std::string_view text, std::string_view prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  text.remove_prefix(at + prefix.size());
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecJattach(const char* path, char* const argv[], int output_fd) {
  static char path_entry[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  static char locale_entry[] = "LC_ALL=C";
  static char* const env[] = {path_entry, locale_entry, nullptr};
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  // A new session: no controlling terminal, so nothing it does can reach the caller's.
  if (::setsid() < 0) _exit(126);
  // Root's supplementary groups stay with a process that only changes its effective ids, as
  // jattach does: drop them first.
  if (::geteuid() == 0 && ::setgroups(0, nullptr) != 0) _exit(126);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0) _exit(126);
  ::close_range(3, ~0U, 0);
  if (::chdir("/") != 0) _exit(126);
  ::execve(path, argv, env);
  _exit(127);
}

}  // namespace

void ParseJattachOutput(std::string_view output, AttachReply* reply) {
  reply->response_code = NumberAfter(output, "JVM response code = ");
  reply->return_code = NumberAfter(output, "return code: ");
}

bool Loaded(const AttachReply& reply) {
  return reply.started && !reply.timed_out && reply.exit_status == 0 && reply.response_code == 0 &&
         reply.return_code == 0;
}

AttachReply RunJattach(const std::string& jattach, uint32_t pid, const std::vector<std::string>& args, int timeout_ms) {
  AttachReply reply;
  if (::access(jattach.c_str(), X_OK) != 0) {
    reply.error = jattach + " not found: install Debian's jattach (apt-get install jattach)";
    return reply;
  }
  std::vector<std::string> strings{jattach, std::to_string(pid)};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    reply.error = std::string("pipe: ") + std::strerror(errno);
    return reply;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    reply.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return reply;
  }
  if (child == 0) ExecJattach(jattach.c_str(), argv.data(), fds[1]);
  ::close(fds[1]);
  reply.started = true;
  const int64_t deadline = NowMs() + timeout_ms;
  char buffer[4096];
  for (;;) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) {
      reply.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // end of output: jattach is done (or closed its output)
    const size_t room = kMaxReplyBytes - std::min(kMaxReplyBytes, reply.output.size());
    reply.output.append(buffer, std::min(room, static_cast<size_t>(n)));
  }
  ::close(fds[0]);
  if (reply.timed_out) ::kill(child, SIGKILL);
  int status = 0;
  // The output is closed; a jattach that lingers after that gets until the deadline too.
  for (;;) {
    const pid_t done = ::waitpid(child, &status, reply.timed_out ? 0 : WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    if (done == 0) {
      if (NowMs() >= deadline) {
        reply.timed_out = true;
        ::kill(child, SIGKILL);
        continue;
      }
      ::usleep(10000);
    }
  }
  reply.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (reply.exit_status == 127) reply.error = "could not run " + jattach;
  ParseJattachOutput(reply.output, &reply);
  return reply;
}

AttachReply SendLoad(const std::string& jattach, uint32_t pid, const std::string& library, const std::string& options,
                     int timeout_ms) {
  return RunJattach(jattach, pid, {"load", library, "true", options}, timeout_ms);
}

}  // namespace jitdump::tool
