// Opening files another user controls (untrusted_file.h).
#include "jitdump/read/untrusted_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace jitdump {
namespace {

Status NotRegular(mode_t mode) {
  if (S_ISDIR(mode)) return Status::Error("a directory, not a regular file", 0);
  if (S_ISFIFO(mode)) return Status::Error("a FIFO, not a regular file", 0);
  if (S_ISSOCK(mode)) return Status::Error("a socket, not a regular file", 0);
  if (S_ISCHR(mode) || S_ISBLK(mode)) return Status::Error("a device, not a regular file", 0);
  return Status::Error("not a regular file", 0);
}

}  // namespace

Status OpenUntrusted(const std::string& path, int* fd, struct stat* st) {
  *fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (*fd < 0) {
    const int err = errno;
    // O_NOFOLLOW: ELOOP for a symlink as the last component.
    if (err == ELOOP) return Status::Error("a symbolic link, not followed", 0);
    return Status::Error("open", err);
  }
  if (::fstat(*fd, st) != 0) {
    const int err = errno;
    ::close(*fd);
    *fd = -1;
    return Status::Error("fstat", err);
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(*fd);
    *fd = -1;
    return NotRegular(st->st_mode);
  }
  return Status::Ok();
}

Status ReadUntrusted(const std::string& path, uint64_t max_bytes, std::string* out) {
  out->clear();
  int fd = -1;
  struct stat st {};
  if (Status status = OpenUntrusted(path, &fd, &st); !status.ok()) return status;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::Error("larger than this reader takes", EFBIG);
  }
  // Read at most max_bytes + 1: a file that grew past the limit since fstat is refused too.
  out->resize(static_cast<size_t>(max_bytes) + 1);
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t got = ::read(fd, out->data() + done, out->size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      out->clear();
      return Status::Error("read", err);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  if (done > max_bytes) {
    out->clear();
    return Status::Error("larger than this reader takes", EFBIG);
  }
  out->resize(done);
  return Status::Ok();
}

}  // namespace jitdump
