#include "jitdump/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace jitdump {

Status CreateExclusive(const std::string& path, int flags, mode_t mode, int* fd) {
  const int open_flags = flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int opened = ::open(path.c_str(), open_flags, mode);
    if (opened >= 0) {
      *fd = opened;
      return Status::Ok();
    }
    if (errno != EEXIST || attempt > 0) return Status::Error("open", errno);
    // Something is in the way. Only a stale regular file of our own may be removed.
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // vanished meanwhile: retry the create
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return Status::Error("open (existing file not ours)", EEXIST);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::Error("unlink stale file", errno);
  }
  return Status::Error("open", EEXIST);
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

Status MakeDirectories(const std::string& path, mode_t mode) {
  if (path.empty()) return Status::Error("mkdir (empty path)", ENOENT);
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    const size_t next = path.find('/', pos + 1);
    prefix = path.substr(0, next);
    pos = next;
    if (prefix.empty() || prefix == "/") continue;
    if (::mkdir(prefix.c_str(), mode) == 0) continue;
    if (errno != EEXIST) return Status::Error("mkdir", errno);
    struct stat st;
    if (::lstat(prefix.c_str(), &st) != 0) return Status::Error("lstat", errno);
    // A symlink planted by another user (in /tmp, say) would redirect our files anywhere.
    if (S_ISLNK(st.st_mode) && st.st_uid != ::geteuid() && st.st_uid != 0) {
      return Status::Error("mkdir (symlink owned by another user)", EPERM);
    }
    if (::stat(prefix.c_str(), &st) != 0) return Status::Error("stat", errno);
    if (!S_ISDIR(st.st_mode)) return Status::Error("mkdir (not a directory)", ENOTDIR);
  }
  return Status::Ok();
}

}  // namespace jitdump
