// Reading a file the invoking user named (regular_file.h).
#include "jitdump/read/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace jitdump {
namespace {

// Reads up to `size` bytes of `fd` into `out` (fewer when the file shrank meanwhile).
Status ReadAll(int fd, uint64_t size, std::vector<uint8_t>* out) {
  out->resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t got = ::read(fd, out->data() + done, out->size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::Error("read", errno);
    if (got == 0) break;  // shrank while reading
    done += static_cast<size_t>(got);
  }
  out->resize(done);
  return Status::Ok();
}

}  // namespace

Status OpenRegularFile(const std::string& path, int* fd, uint64_t* size) {
  // O_NONBLOCK: a FIFO at the path must not block the open (it is refused below, unread).
  *fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (*fd < 0) return Status::Error("open", errno);
  struct stat st {};
  if (::fstat(*fd, &st) != 0) {
    const int err = errno;
    ::close(*fd);
    *fd = -1;
    return Status::Error("fstat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(*fd);
    *fd = -1;
    return Status::Error("open (not a regular file)", EINVAL);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return Status::Ok();
}

Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out) {
  out->clear();
  int fd = -1;
  uint64_t size = 0;
  if (const Status status = OpenRegularFile(path, &fd, &size); !status.ok()) return status;
  const Status status = ReadAll(fd, size, out);
  ::close(fd);
  return status;
}

}  // namespace jitdump
