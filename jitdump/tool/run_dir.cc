// The run directory: creation, trust checks and the dumps root copies before perf inject
// (run_dir.h).
#include "jitdump/tool/run_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "jitdump/format/text.h"
#include "jitdump/write/safe_file.h"
#include "jitdump/tool/follow_copy.h"

namespace jitdump::tool {
namespace {

std::string Octal(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// "jit-1234.dump"
bool IsDumpName(const std::string& name) {
  if (name.size() < 10 || name.compare(0, 4, "jit-") != 0 || name.compare(name.size() - 5, 5, ".dump") != 0) return false;
  const std::string digits = name.substr(4, name.size() - 9);
  return !digits.empty() && digits.size() <= 10 && digits.find_first_not_of("0123456789") == std::string::npos;
}

// "jit-1234-2": the agent's directory for a second JVM with pid 1234; its dump is jit-1234.dump.
bool IsSamePidDirectory(const std::string& name, std::string* dump_name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash + 2 != name.size() || name[dash + 1] < '2' || name[dash + 1] > '9') return false;
  *dump_name = name.substr(0, dash) + ".dump";
  return IsDumpName(*dump_name);
}

// Whether a process with the JVM's credentials can create files in `path`: checked by such a
// process (a child with exactly those credentials, which runs no program), so every directory
// above counts as the kernel counts it (search permission, ACLs).
bool ReachableBy(const std::string& path, uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    const bool switched = ::setgroups(groups.size(), groups.data()) == 0 && ::setresgid(gid, gid, gid) == 0 &&
                          ::setresuid(uid, uid, uid) == 0;
    _exit(switched && ::faccessat(AT_FDCWD, path.c_str(), W_OK | X_OK, AT_EACCESS) == 0 ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Copies the dump `name` of `from` (owned by `owner`) to a new file `name` in `to`: whole
// records only, the source opened without following a link or blocking, and only a regular
// file of `owner`.
bool CopyDump(int from, int to, const std::string& name, const std::string& shown, uid_t owner,
              std::vector<std::string>* notes) {
  Fd source(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (source.get() < 0 || ::fstat(source.get(), &st) != 0) {
    notes->push_back(shown + ": skipped (" + (errno == ELOOP ? "a symbolic link" : std::strerror(errno)) + ")");
    return false;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != owner) {
    notes->push_back(shown + ": skipped (" + (S_ISREG(st.st_mode) ? "owned by uid " + std::to_string(st.st_uid)
                                                                     : std::string("not a regular file")) + ")");
    return false;
  }
  int dest_fd = -1;
  CreateRules rules;
  rules.flags = O_WRONLY;
  rules.mode = 0600;
  if (const Status status = CreateExclusiveAt(to, name, rules, &dest_fd); !status.ok()) {
    notes->push_back(shown + ": not copied (" + status.ToString() + ")");
    return false;
  }
  Fd dest(dest_fd);
  FollowCopy copy(source.get(), dest.get(), {});
  std::string error;
  if (!copy.CopyAvailable(&error)) {
    ::unlinkat(to, name.c_str(), 0);
    notes->push_back(shown + ": not copied (" + Printable(error.substr(0, error.find(':'))) + ")");
    return false;
  }
  return true;
}

}  // namespace

std::string PathOf(int dir_fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", dir_fd);
  std::string path(4096, '\0');
  const ssize_t n = ::readlink(link, path.data(), path.size());
  if (n <= 0 || static_cast<size_t>(n) >= path.size()) return "";
  path.resize(static_cast<size_t>(n));
  return path;
}

std::string UntrustedAncestry(int dir_fd, uid_t uid, const std::string& path) {
  Fd fd(::openat(dir_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Printable(path) + ": " + std::strerror(errno);
  for (int depth = 0; depth < 4096; ++depth) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Printable(path) + ": " + std::strerror(errno);
    const std::string here = depth == 0 ? path : PathOf(fd.get());
    if (st.st_uid != 0 && st.st_uid != uid) {
      return Printable(here) + " belongs to uid " + std::to_string(st.st_uid) +
             ", who could swap what is below it for a symlink";
    }
    const bool others_write = (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0 &&
                                                              st.st_gid != ::getegid());
    if (others_write && (st.st_mode & S_ISVTX) == 0) {
      return Printable(here) + " is writable by other users (mode " + Octal(st.st_mode) +
             ", not sticky), who could swap what is below it for a symlink";
    }
    Fd parent(::openat(fd.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat up {};
    if (parent.get() < 0 || ::fstat(parent.get(), &up) != 0) return Printable(here) + "/..: " + std::strerror(errno);
    if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) return "";  // the root
    fd.Reset(parent.release());
  }
  return Printable(path) + ": too deep";
}

bool CreateRunDirectory(const std::string& path, bool for_jvm, uid_t jvm_uid, gid_t jvm_gid,
                        const std::vector<gid_t>& jvm_groups, NewRun* run, std::string* error) {
  std::string parent_path = DirectoryOf(path);
  std::string name(BaseName(path));
  while (name.empty() && path.size() > 1 && path.back() == '/') {  // "run/"
    const std::string trimmed = path.substr(0, path.find_last_not_of('/') + 1);
    parent_path = DirectoryOf(trimmed);
    name = std::string(BaseName(trimmed));
  }
  if (name.empty() || name == "." || name == "..") {
    *error = Printable(path) + ": not a name for a new directory";
    return false;
  }
  Fd parent(::open(parent_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (parent.get() < 0) {
    *error = "cannot make the run directory in " + Printable(parent_path) + ": " + std::strerror(errno);
    return false;
  }
  if (const std::string why = UntrustedAncestry(parent.get(), ::geteuid(), PathOf(parent.get())); !why.empty()) {
    *error = "refusing to make the run directory " + Printable(path) + ": " + why +
             ". Give -o a new directory under one only you (or root) can change, e.g. /tmp/NAME or /var/tmp/NAME";
    return false;
  }
  if (::mkdirat(parent.get(), name.c_str(), 0755) != 0) {
    const int err = errno;
    *error = err == EEXIST ? Printable(path) + " already exists: the run goes into a new directory only (files "
                                               "someone put there first would be trusted); give -o a name that "
                                               "does not exist yet"
                           : "cannot create " + Printable(path) + ": " + std::strerror(err);
    return false;
  }
  Fd dir(::openat(parent.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  auto undo = [&](bool jit_made) {
    if (jit_made && dir.get() >= 0) ::unlinkat(dir.get(), "jit", AT_REMOVEDIR);
    ::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR);
  };
  struct stat st {};
  if (dir.get() < 0 || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid()) {
    *error = "the new directory " + Printable(path) + " was replaced meanwhile";
    return false;  // not ours to remove
  }
  if (::mkdirat(dir.get(), "jit", 0755) != 0) {
    *error = "cannot create " + Printable(path) + "/jit: " + std::strerror(errno);
    undo(false);
    return false;
  }
  const std::string canonical = PathOf(dir.get());
  if (for_jvm && ::geteuid() == 0 && jvm_uid != 0) {
    // The JVM writes its dump itself: RUN/jit is handed to its user, by descriptor.
    Fd jit(::openat(dir.get(), "jit", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (jit.get() < 0 || ::fchown(jit.get(), jvm_uid, jvm_gid) != 0) {
      *error = "cannot hand " + Printable(path) + "/jit to uid " + std::to_string(jvm_uid) + ": " + std::strerror(errno);
      undo(true);
      return false;
    }
    if (!ReachableBy(canonical + "/jit", jvm_uid, jvm_gid, jvm_groups)) {
      *error = "the JVM runs as uid " + std::to_string(jvm_uid) + ", which cannot write " + Printable(canonical) +
               "/jit (a directory above it is closed to that user)";
      undo(true);
      return false;
    }
  }
  run->path = canonical;
  run->fd = dir.release();
  return true;
}

bool OpenRunDirectory(const std::string& path, NewRun* run, std::string* error) {
  Fd dir(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) {
    *error = Printable(path) + ": " + (errno == ELOOP || errno == ENOTDIR ? std::string("not a directory (a symlink is not followed)")
                                                                          : std::string(std::strerror(errno)));
    return false;
  }
  const std::string canonical = PathOf(dir.get());
  if (const std::string why = UntrustedAncestry(dir.get(), ::geteuid(), canonical); !why.empty()) {
    *error = "refusing the run directory " + Printable(path) + ": " + why;
    return false;
  }
  run->path = canonical;
  run->fd = dir.release();
  return true;
}

bool TakeDumps(int run_fd, const std::string& run_path, std::vector<std::string>* notes, std::string* error) {
  Fd jit(::openat(run_fd, "jit", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (jit.get() < 0) {
    if (errno == ENOENT) return true;
    *error = Printable(run_path) + "/jit: " + (errno == ELOOP || errno == ENOTDIR ? std::string("not a directory")
                                                                                   : std::string(std::strerror(errno)));
    return false;
  }
  struct stat st {};
  if (::fstat(jit.get(), &st) != 0) {
    *error = Printable(run_path) + "/jit: " + std::strerror(errno);
    return false;
  }
  if (st.st_uid == ::geteuid()) return true;  // ours already
  const uid_t owner = st.st_uid;
  const std::string aside = "jit-uid" + std::to_string(owner);
  if (::renameat(run_fd, "jit", run_fd, aside.c_str()) != 0) {
    *error = "cannot move " + Printable(run_path) + "/jit (uid " + std::to_string(owner) + "'s) to " + aside + ": " +
             std::strerror(errno);
    return false;
  }
  notes->push_back(run_path + "/jit belongs to uid " + std::to_string(owner) + " (the JVM's user): moved to " + aside +
                   ", and " + run_path + "/jit made anew with copies of its dumps for perf inject");
  if (::mkdirat(run_fd, "jit", 0755) != 0) {
    *error = "cannot create " + Printable(run_path) + "/jit: " + std::strerror(errno);
    return false;
  }
  Fd copies(::openat(run_fd, "jit", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (copies.get() < 0 || ::fstat(copies.get(), &st) != 0 || st.st_uid != ::geteuid()) {
    *error = Printable(run_path) + "/jit was replaced meanwhile";
    return false;
  }
  std::unique_ptr<DIR, int (*)(DIR*)> listing(::fdopendir(::dup(jit.get())), ::closedir);
  if (!listing) {
    *error = "cannot list " + aside + ": " + std::strerror(errno);
    return false;
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing.get())) names.emplace_back(entry->d_name);
  for (const std::string& name : names) {
    std::string dump_name;
    if (IsDumpName(name)) {
      CopyDump(jit.get(), copies.get(), name, aside + "/" + name, owner, notes);
    } else if (IsSamePidDirectory(name, &dump_name)) {
      Fd sub(::openat(jit.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0 || ::fstat(sub.get(), &st) != 0 || st.st_uid != owner) {
        notes->push_back(aside + "/" + name + ": skipped (not a directory of uid " + std::to_string(owner) + ")");
        continue;
      }
      if (::mkdirat(copies.get(), name.c_str(), 0755) != 0) continue;
      Fd sub_copy(::openat(copies.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub_copy.get() >= 0) CopyDump(sub.get(), sub_copy.get(), dump_name, aside + "/" + name + "/" + dump_name, owner, notes);
    }
  }
  return true;
}

}  // namespace jitdump::tool
