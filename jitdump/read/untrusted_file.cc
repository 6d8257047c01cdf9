// Opening files another user controls (untrusted_file.h).
#include "jitdump/read/untrusted_file.h"

#include <unistd.h>

#include <cerrno>

#include "jitdump/read/regular_file.h"

namespace jitdump {

Status OpenUntrusted(const std::string& path, int* fd, struct stat* st) {
  return OpenRegular(path, /*follow_last_link=*/false, fd, st);
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
  const Status status = ReadUpTo(fd, out->data(), out->size(), &done);
  ::close(fd);
  if (!status.ok()) {
    out->clear();
    return status;
  }
  if (done > max_bytes) {
    out->clear();
    return Status::Error("larger than this reader takes", EFBIG);
  }
  out->resize(done);
  return Status::Ok();
}

}  // namespace jitdump
