#include "jitdump/report/line_stream.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

extern char** environ;

namespace jitdump::report {
namespace {

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Reads `fd` to its end, calling `on_line` per line; a last line without a newline counts.
bool ReadLines(int fd, const LineHandler& on_line, std::string* error) {
  constexpr size_t kBlock = 1 << 20;
  std::string buffer;
  buffer.resize(kBlock);
  size_t begin = 0, end = 0;  // unconsumed bytes are buffer[begin, end)
  for (;;) {
    if (begin > 0 && (end == buffer.size() || begin == end)) {  // move the partial line to the front
      std::memmove(buffer.data(), buffer.data() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    if (end == buffer.size()) buffer.resize(buffer.size() * 2);  // a line longer than the buffer
    const ssize_t n = read(fd, buffer.data() + end, buffer.size() - end);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = Errno("read", errno);
      return false;
    }
    if (n == 0) break;
    const size_t scan_from = end;
    end += static_cast<size_t>(n);
    const char* data = buffer.data();
    size_t pos = scan_from;
    while (const void* nl = std::memchr(data + pos, '\n', end - pos)) {
      const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - data);
      on_line(std::string_view(data + begin, at - begin));
      begin = at + 1;
      pos = begin;
    }
  }
  if (end > begin) on_line(std::string_view(buffer.data() + begin, end - begin));
  return true;
}

}  // namespace

bool ForEachOutputLine(const std::vector<std::string>& argv, const LineHandler& on_line, std::string* error) {
  if (argv.empty()) {
    *error = "no command";
    return false;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *error = Errno("pipe", errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    *error = Errno("cannot run " + argv[0], spawned);
    return false;
  }
  std::string read_error;
  bool ok = true;
  try {
    ok = ReadLines(pipe_fds[0], on_line, &read_error);
  } catch (...) {
    // The handler failed (out of memory): stop the command before passing the failure on.
    close(pipe_fds[0]);
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    throw;
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *error = Errno("waitpid", errno);
      return false;
    }
  }
  if (!ok) {
    *error = read_error;
    return false;
  }
  if (WIFSIGNALED(status)) {
    *error = argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return false;
  }
  if (WEXITSTATUS(status) == 127) {
    *error = argv[0] + " could not be run (exit status 127)";
    return false;
  }
  if (WEXITSTATUS(status) != 0) {
    *error = argv[0] + " exited with status " + std::to_string(WEXITSTATUS(status));
    return false;
  }
  return true;
}

bool ForEachFileLine(const std::string& path, const LineHandler& on_line, std::string* error) {
  const bool stdin_input = path == "-";
  const int fd = stdin_input ? 0 : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = Errno(path, errno);
    return false;
  }
  std::string read_error;
  const bool ok = ReadLines(fd, on_line, &read_error);
  if (!stdin_input) close(fd);
  if (!ok) *error = path + ": " + read_error;
  return ok;
}

}  // namespace jitdump::report
