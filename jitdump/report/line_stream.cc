#include "jitdump/report/line_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
