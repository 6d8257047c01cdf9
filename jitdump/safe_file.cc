// Creating files safely in directories others may write to (safe_file.h): exclusive, never
// through a symlink, never over another user's file, linked into place already written.
#include "jitdump/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace jitdump {

namespace {

// Removes what is at `path` when it is a stale regular file of ours (an earlier process with
// the same pid); anything else (a symlink, a directory, another user's file) stays: false.
bool RemoveStaleOwnFile(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;  // vanished meanwhile
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return false;
  return ::unlink(path.c_str()) == 0 || errno == ENOENT;
}

// Links the unnamed file `tmp_fd` at `path` (never replacing anything but a stale file of ours)
// and opens `path` with `flags`. Sets *unavailable when linking this way cannot work here (no
// /proc in a minimal chroot, a seccomp filter refusing linkat, ...): the caller then falls back.
Status LinkIntoPlace(int tmp_fd, const std::string& path, int flags, int* fd, bool* unavailable) {
  char proc_path[64];
  std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", tmp_fd);
  for (int attempt = 0;; ++attempt) {
    if (::linkat(AT_FDCWD, proc_path, AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST) {
      *unavailable = true;
      return Status::Error("link", errno);
    }
    if (attempt > 0) return Status::Error("link", EEXIST);
    if (!RemoveStaleOwnFile(path)) return Status::Error("open (existing file not ours)", EEXIST);
  }
  // Reopen by name: the unnamed file's descriptor would show up in /proc/self/maps as
  // "/dir/#inode (deleted)", which perf inject cannot match to the dump.
  const int opened = ::open(path.c_str(), (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_CLOEXEC);
  if (opened < 0) return Status::Error("reopen", errno);
  struct stat linked, reopened;
  if (::fstat(tmp_fd, &linked) != 0 || ::fstat(opened, &reopened) != 0 || linked.st_dev != reopened.st_dev ||
      linked.st_ino != reopened.st_ino) {
    ::close(opened);  // someone swapped the name between link and open: not our file
    return Status::Error("reopen (file replaced)", EEXIST);
  }
  *fd = opened;
  return Status::Ok();
}

}  // namespace

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

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
    if (!RemoveStaleOwnFile(path)) return Status::Error("open (existing file not ours)", EEXIST);
  }
  return Status::Error("open", EEXIST);
}

Status CreateWithContents(const std::string& path, int flags, mode_t mode, const void* contents, size_t size,
                          int* fd) {
  const int tmp_fd = ::open(DirectoryOf(path).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
  // EISDIR/EINVAL: a kernel or C library without O_TMPFILE; EOPNOTSUPP: a file system without it.
  if (tmp_fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return Status::Error("open", errno);
  if (tmp_fd >= 0) {
    if (!WriteAll(tmp_fd, contents, size)) {
      const int err = errno;
      ::close(tmp_fd);  // the unnamed file vanishes with its descriptor
      return Status::Error("write", err);
    }
    bool unavailable = false;
    const Status linked = LinkIntoPlace(tmp_fd, path, flags, fd, &unavailable);
    ::close(tmp_fd);
    if (!unavailable) {
      if (linked.ok() && ::lseek(*fd, static_cast<off_t>(size), SEEK_SET) < 0) {
        const int err = errno;
        ::close(*fd);
        return Status::Error("lseek", err);
      }
      return linked;
    }
    // Fall through: the plain exclusive create below reports any real problem (a missing or
    // read-only directory, a full disk) itself.
  }
  const Status created = CreateExclusive(path, flags, mode, fd);
  if (!created.ok()) return created;
  if (!WriteAll(*fd, contents, size)) {
    const int err = errno;
    ::unlink(path.c_str());  // a file without its first bytes is worse than none
    ::close(*fd);
    return Status::Error("write", err);
  }
  return Status::Ok();
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
