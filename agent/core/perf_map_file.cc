// perf-<pid>.map, appended and compacted (perf_map_file.h).
#include "agent/core/perf_map_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "jitdump/write/perf_map.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {

PerfMapFile::~PerfMapFile() { Close(); }

jitdump::Status PerfMapFile::Open(jitdump::HeldDirectory dir, const std::string& name,
                                  const jitdump::CreateRules& rules) {
  jitdump::CreateRules append = rules;
  append.flags = O_WRONLY | O_APPEND;
  int fd = -1;
  const jitdump::Status status = jitdump::CreateExclusiveAt(dir.fd(), name, append, &fd);
  if (!status.ok()) return status;
  mode_ = rules.mode;
  path_ = dir.path() + "/" + name;
  name_ = name;
  dir_ = std::move(dir);
  fd_ = fd;
  return jitdump::Status::Ok();
}

void PerfMapFile::Add(uint64_t start, uint64_t size, std::string_view name) {
  if (fd_ < 0) return;
  jitdump::AppendPerfMapLine(start, size, name, buffer_);
  ++lines_;
}

long PerfMapFile::Flush() {
  if (fd_ < 0 || buffer_.empty()) return 0;
  long count = 0;
  for (char c : buffer_) count += c == '\n';
  const bool ok = jitdump::WriteAll(fd_, buffer_.data(), buffer_.size());
  if (ok) {
    size_ += buffer_.size();
  } else {
    // A full disk can take part of the buffer: cut the file back to its last whole line, as
    // the dump is cut back to its last whole record (perf would read a torn line as a symbol).
    const int err = errno;
    // If even the truncation fails the torn line stays; the caller warns about the write.
    (void)!::ftruncate(fd_, static_cast<off_t>(size_));
    errno = err;
  }
  buffer_.clear();
  return ok ? count : -1;
}

jitdump::Status PerfMapFile::Compact(const std::function<void(const LiveVisitor&)>& for_each_live,
                                     uint64_t now_ns) {
  if (fd_ < 0) return jitdump::Status::Ok();
  last_compaction_ns_ = now_ns;
  // A fresh, unpredictable name created with O_EXCL in the held directory: nothing planted can
  // be followed, and a directory renamed away and replaced by a symlink redirects nothing.
  std::string temp;
  int fd = -1;
  const jitdump::Status created =
      jitdump::CreateTemporaryAt(dir_.fd(), name_ + ".", O_WRONLY | O_APPEND, 0600, &fd, &temp);
  if (!created.ok()) return created;
  // The compacted file keeps the permissions the map was created with (mode= minus the umask),
  // so a reader's access does not change at the first compaction.
  struct stat current;
  (void)::fchmod(fd, ::fstat(fd_, &current) == 0 ? (current.st_mode & 07777) : mode_);
  std::string text;
  uint64_t count = 0;
  for_each_live([&](uint64_t start, uint64_t size, std::string_view name) {
    jitdump::AppendPerfMapLine(start, size, name, text);
    ++count;
  });
  if (!jitdump::WriteAll(fd, text.data(), text.size())) {
    const int err = errno;
    ::close(fd);
    ::unlinkat(dir_.fd(), temp.c_str(), 0);
    return jitdump::Status::Error("write perf map", err);
  }
  if (::renameat(dir_.fd(), temp.c_str(), dir_.fd(), name_.c_str()) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlinkat(dir_.fd(), temp.c_str(), 0);
    return jitdump::Status::Error("rename perf map", err);
  }
  ::close(fd_);
  fd_ = fd;
  buffer_.clear();
  size_ = text.size();
  lines_ = count;
  stale_ = 0;
  return jitdump::Status::Ok();
}

void PerfMapFile::Discard() {
  if (fd_ < 0) return;
  struct stat ours, named;
  if (::fstat(fd_, &ours) == 0 && ::fstatat(dir_.fd(), name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      ours.st_dev == named.st_dev && ours.st_ino == named.st_ino) {
    ::unlinkat(dir_.fd(), name_.c_str(), 0);
  }
  Close();
}

void PerfMapFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  dir_ = jitdump::HeldDirectory();  // and the directory's descriptor: a stopped agent holds none
}

}  // namespace jitdump_agent
