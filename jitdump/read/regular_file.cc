// Reading a file the invoking user named (regular_file.h).
#include "jitdump/read/regular_file.h"

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

Status OpenRegular(const std::string& path, bool follow_last_link, int* fd, struct stat* st) {
  // O_NONBLOCK: a FIFO at the path must not block the open (it is refused below, unread).
  *fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_last_link ? 0 : O_NOFOLLOW));
  if (*fd < 0) {
    const int err = errno;
    // O_NOFOLLOW: ELOOP for a symlink as the last component.
    if (err == ELOOP && !follow_last_link) return Status::Error("a symbolic link, not followed", 0);
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

Status ReadUpTo(int fd, void* buffer, size_t limit, size_t* done) {
  *done = 0;
  while (*done < limit) {
    const ssize_t got = ::read(fd, static_cast<char*>(buffer) + *done, limit - *done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::Error("read", errno);
    if (got == 0) break;  // the end (sooner than fstat said when it shrank while read)
    *done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

Status OpenRegularFile(const std::string& path, int* fd, uint64_t* size) {
  struct stat st {};
  if (Status status = OpenRegular(path, /*follow_last_link=*/true, fd, &st); !status.ok()) return status;
  *size = static_cast<uint64_t>(st.st_size);
  return Status::Ok();
}

Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out) {
  out->clear();
  int fd = -1;
  uint64_t size = 0;
  if (const Status status = OpenRegularFile(path, &fd, &size); !status.ok()) return status;
  out->resize(static_cast<size_t>(size));
  size_t done = 0;
  const Status status = ReadUpTo(fd, out->data(), out->size(), &done);
  ::close(fd);
  out->resize(status.ok() ? done : 0);
  return status;
}

}  // namespace jitdump
