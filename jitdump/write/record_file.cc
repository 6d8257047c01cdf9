#include "jitdump/write/record_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "jitdump/format/text.h"

namespace jitdump {

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void RecordFile::Hold(int fd, int dir_fd, std::string name, std::string path, uint64_t size) {
  fd_ = fd;
  dir_fd_ = dir_fd;
  name_ = std::move(name);
  path_ = std::move(path);
  size_ = size;
}

Status RecordFile::Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules, int flags,
                          std::span<const uint8_t> header) {
  CreateRules with_flags = rules;
  with_flags.flags = flags;
  int fd = -1;
  const Status status = CreateWithContentsAt(dir.fd(), name, with_flags, header.data(), header.size(), &fd);
  if (!status.ok()) return status;
  Hold(fd, ::fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0), name, dir.path() + "/" + name, header.size());
  return Status::Ok();
}

Status RecordFile::Create(const std::string& path, int flags, mode_t mode, std::span<const uint8_t> header) {
  const int dir = ::open(DirectoryOf(path).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Status::Error("open", errno);
  int fd = -1;
  const Status status =
      CreateWithContentsAt(dir, std::string(BaseName(path)), CreateRules{flags, mode, 0}, header.data(), header.size(), &fd);
  if (!status.ok()) {
    ::close(dir);
    return status;
  }
  Hold(fd, dir, std::string(BaseName(path)), path, header.size());
  return Status::Ok();
}

Status RecordFile::Append(const struct iovec* iov, int iovcnt) {
  if (fd_ < 0) return Status::Error("write (file not open)", EBADF);
  return AppendWholeRecords(fd_, &size_, iov, iovcnt);
}

Status RecordFile::Close(bool sync) {
  if (fd_ < 0) return Status::Ok();
  Status status = Status::Ok();
  if (sync && ::fsync(fd_) != 0) status = Status::Error("fsync", errno);
  if (dir_fd_ >= 0) {
    ::close(dir_fd_);
    dir_fd_ = -1;
  }
  if (::close(fd_) != 0 && status.ok()) status = Status::Error("close", errno);
  fd_ = -1;
  return status;
}

void RecordFile::Discard() {
  if (fd_ < 0) return;
  RemoveIfStillAt(dir_fd_, name_, fd_);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace jitdump
