// Creating files safely in directories others may write to (safe_file.h): relative to a held
// directory, exclusive, never through a symlink, never over another user's file or a file a
// live process holds, linked into place already written.
#include "jitdump/write/safe_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <utility>

namespace jitdump {

namespace {

int64_t ModifiedNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool SameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The mark of a live writer: a shared flock, held for as long as the writer's descriptor is
// open. A file system without flock (some FUSE mounts) leaves files unmarked: best effort.
void MarkLive(int fd) { (void)::flock(fd, LOCK_SH | LOCK_NB); }

// Removes `name` in `dir` when it is a stale regular file of ours: an earlier process with the
// same pid left it, and no live process holds it (a JVM with the same pid in another pid
// namespace sharing this directory would). Ok when removed or gone meanwhile; EEXIST when it is
// not ours or not a regular file; kInUse when it is ours but live or recent.
Status RemoveStaleOwnFile(int dir, const std::string& name, int64_t not_before_ns) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok() : Status::Error("stat existing file", errno);
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return Status::Error("open (existing file not ours)", EEXIST);
  if (not_before_ns != 0 && ModifiedNs(st) >= not_before_ns) {
    return Status::Error("open (existing file written since this agent started)", kInUse);
  }
  // O_RDWR: flock on NFS is a byte-range lock and wants write access. O_NONBLOCK: a FIFO swapped
  // in meanwhile must not block (the inode check below refuses it).
  const int fd = ::openat(dir, name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::Ok() : Status::Error("open existing file", errno);
  Status result = Status::Ok();
  struct stat opened, now;
  if (::fstat(fd, &opened) != 0 || !SameFile(opened, st)) {
    result = Status::Error("open (existing file replaced meanwhile)", EEXIST);
  } else if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    result = errno == EWOULDBLOCK ? Status::Error("open (existing file held by a live process)", kInUse)
                                  : Status::Error("flock existing file", errno);
  } else if (::fstatat(dir, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) result = Status::Error("stat existing file", errno);
  } else if (!SameFile(now, opened)) {
    // Another process removed the stale file and created its own meanwhile: that one is live.
    result = Status::Error("open (existing file held by a live process)", kInUse);
  } else if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) {
    result = Status::Error("unlink stale file", errno);
  }
  ::close(fd);
  return result;
}

// Links the unnamed file `tmp_fd` at `name` in `dir` (never replacing anything but a stale file
// of ours) and opens it with `rules.flags`. Sets *unavailable when linking this way cannot work
// here (no /proc in a minimal chroot, a seccomp filter refusing linkat, ...): the caller then
// falls back.
Status LinkIntoPlace(int tmp_fd, int dir, const std::string& name, const CreateRules& rules, int* fd,
                     bool* unavailable) {
  char proc_path[64];
  std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", tmp_fd);
  for (int attempt = 0;; ++attempt) {
    if (::linkat(AT_FDCWD, proc_path, dir, name.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST) {
      *unavailable = true;
      return Status::Error("link", errno);
    }
    if (attempt > 0) return Status::Error("link", EEXIST);
    const Status removed = RemoveStaleOwnFile(dir, name, rules.not_before_ns);
    if (!removed.ok()) return removed;
  }
  // Reopen by name: the unnamed file's descriptor would show up in /proc/self/maps as
  // "/dir/#inode (deleted)", which perf inject cannot match to the dump.
  const int opened =
      ::openat(dir, name.c_str(), (rules.flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_CLOEXEC);
  if (opened < 0) return Status::Error("reopen", errno);
  struct stat linked, reopened;
  if (::fstat(tmp_fd, &linked) != 0 || ::fstat(opened, &reopened) != 0 || !SameFile(linked, reopened)) {
    ::close(opened);  // someone swapped the name between link and open: not our file
    return Status::Error("reopen (file replaced)", EEXIST);
  }
  MarkLive(opened);  // shared with the unnamed descriptor's lock, which the caller then drops
  *fd = opened;
  return Status::Ok();
}

// Runs `create(dir_fd, base name)` in the directory of `path`, opened once for the call.
template <typename Create>
Status AtDirectoryOf(const std::string& path, Create create) {
  const int dir = ::open(DirectoryOf(path).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Status::Error("open", errno);
  const Status status = create(dir, std::string(BaseName(path)));
  ::close(dir);
  return status;
}

// 12 characters of [A-Za-z0-9] from the kernel's random pool (a clock-and-counter mix where
// getrandom is refused): unpredictable enough that nobody can plant the name in advance, and
// O_EXCL refuses it if someone did.
std::string RandomSuffix() {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::atomic<uint64_t> counter{0};
  unsigned char bytes[12];
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    struct timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t mix = static_cast<uint64_t>(now.tv_nsec) ^ (static_cast<uint64_t>(now.tv_sec) << 30) ^
                   (static_cast<uint64_t>(::getpid()) << 40) ^ counter.fetch_add(0x9e3779b97f4a7c15ull);
    for (unsigned char& b : bytes) {
      mix ^= mix >> 33;
      mix *= 0xff51afd7ed558ccdull;
      b = static_cast<unsigned char>(mix >> 56);
    }
  }
  std::string out;
  for (unsigned char b : bytes) out.push_back(kAlphabet[b % (sizeof kAlphabet - 1)]);
  return out;
}

}  // namespace

HeldDirectory::~HeldDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

HeldDirectory::HeldDirectory(HeldDirectory&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

HeldDirectory& HeldDirectory::operator=(HeldDirectory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

Status HeldDirectory::Open(const std::string& path, mode_t mode) {
  const Status made = MakeDirectories(path, mode);
  if (!made.ok()) return made;
  const int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::Error("open directory", errno);
  // Judge the directory actually held (whatever the path led to by now), not the path.
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Error("stat directory", err);
  }
  const bool foreign_owner = st.st_uid != ::geteuid() && st.st_uid != 0;
  const bool others_write = (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != ::getegid());
  if (foreign_owner || (others_write && (st.st_mode & S_ISVTX) == 0)) {
    refused_owner_ = st.st_uid;
    refused_mode_ = st.st_mode & 07777;
    ::close(fd);
    return Status::Error(foreign_owner ? "directory owned by another user" : "directory writable by other users",
                         EPERM);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  path_ = path;
  return Status::Ok();
}

HeldDirectory HeldDirectory::Duplicate() const {
  HeldDirectory copy;
  copy.fd_ = fd_ >= 0 ? ::fcntl(fd_, F_DUPFD_CLOEXEC, 0) : -1;
  copy.path_ = path_;
  return copy;
}

Status HeldDirectory::OpenChild(const HeldDirectory& parent, const std::string& name, mode_t mode) {
  if (::mkdirat(parent.fd(), name.c_str(), mode) != 0 && errno != EEXIST) return Status::Error("mkdir", errno);
  const int fd = ::openat(parent.fd(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::Error("open directory", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    return Status::Error("directory owned by another user", EPERM);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  path_ = parent.path() + "/" + name;
  return Status::Ok();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status CreateExclusiveAt(int dir, const std::string& name, const CreateRules& rules, int* fd) {
  const int open_flags = rules.flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int opened = ::openat(dir, name.c_str(), open_flags, rules.mode);
    if (opened >= 0) {
      MarkLive(opened);
      *fd = opened;
      return Status::Ok();
    }
    if (errno != EEXIST || attempt > 0) return Status::Error("open", errno);
    // Something is in the way. Only a stale regular file of our own may be removed.
    const Status removed = RemoveStaleOwnFile(dir, name, rules.not_before_ns);
    if (!removed.ok()) return removed;
  }
  return Status::Error("open", EEXIST);
}

Status CreateWithContentsAt(int dir, const std::string& name, const CreateRules& rules, const void* contents,
                            size_t size, int* fd) {
  const int tmp_fd = ::openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, rules.mode);
  // EISDIR/EINVAL: a kernel or C library without O_TMPFILE; EOPNOTSUPP: a file system without it.
  if (tmp_fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return Status::Error("open", errno);
  if (tmp_fd >= 0) {
    MarkLive(tmp_fd);  // live before it has a name: no moment in which it looks stale
    if (!WriteAll(tmp_fd, contents, size)) {
      const int err = errno;
      ::close(tmp_fd);  // the unnamed file vanishes with its descriptor
      return Status::Error("write", err);
    }
    bool unavailable = false;
    const Status linked = LinkIntoPlace(tmp_fd, dir, name, rules, fd, &unavailable);
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
  const Status created = CreateExclusiveAt(dir, name, rules, fd);
  if (!created.ok()) return created;
  if (!WriteAll(*fd, contents, size)) {
    const int err = errno;
    ::unlinkat(dir, name.c_str(), 0);  // a file without its first bytes is worse than none
    ::close(*fd);
    return Status::Error("write", err);
  }
  return Status::Ok();
}

Status CreateTemporaryAt(int dir, const std::string& prefix, int flags, mode_t mode, int* fd, std::string* name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = prefix + RandomSuffix();
    const int opened = ::openat(dir, candidate.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (opened >= 0) {
      MarkLive(opened);
      *fd = opened;
      *name = std::move(candidate);
      return Status::Ok();
    }
    if (errno != EEXIST) return Status::Error("create temporary file", errno);
  }
  return Status::Error("create temporary file", EEXIST);
}

Status CreateExclusive(const std::string& path, int flags, mode_t mode, int* fd) {
  return AtDirectoryOf(path, [&](int dir, const std::string& name) {
    return CreateExclusiveAt(dir, name, CreateRules{flags, mode, 0}, fd);
  });
}

Status CreateWithContents(const std::string& path, int flags, mode_t mode, const void* contents, size_t size,
                          int* fd) {
  return AtDirectoryOf(path, [&](int dir, const std::string& name) {
    return CreateWithContentsAt(dir, name, CreateRules{flags, mode, 0}, contents, size, fd);
  });
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

void RemoveIfStillAt(int dir_fd, const std::string& name, int fd) {
  struct stat ours, named;
  if (dir_fd >= 0 && ::fstat(fd, &ours) == 0 && ::fstatat(dir_fd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      SameFile(ours, named)) {
    ::unlinkat(dir_fd, name.c_str(), 0);
  }
}

Status AppendWholeRecords(int fd, uint64_t* end, const struct iovec* iov, int iovcnt) {
  uint64_t offset = *end;
  int index = 0;
  size_t skip = 0;  // bytes of iov[index] already written
  while (index < iovcnt) {
    struct iovec batch[IOV_MAX];
    int count = 0;
    for (int i = index; i < iovcnt && count < IOV_MAX; ++i, ++count) {
      const size_t already = i == index ? skip : 0;
      batch[count].iov_base = static_cast<char*>(iov[i].iov_base) + already;
      batch[count].iov_len = iov[i].iov_len - already;
    }
    const ssize_t written = ::pwritev(fd, batch, count, static_cast<off_t>(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int err = written < 0 ? errno : ENOSPC;
      // Cut the partial tail so the file still ends on a whole record.
      if (offset != *end) (void)!::ftruncate(fd, static_cast<off_t>(*end));
      return Status::Error("write", err);
    }
    offset += static_cast<uint64_t>(written);
    size_t left = static_cast<size_t>(written);
    while (index < iovcnt && left >= iov[index].iov_len - skip) {
      left -= iov[index].iov_len - skip;
      skip = 0;
      ++index;
    }
    skip += left;
  }
  *end = offset;
  return Status::Ok();
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
