// A jitdump file being written (dump_file.h): created with its header in place, perf's marker
// page mapped, records appended whole or not at all, closed with JIT_CODE_CLOSE.
#include "jitdump/write/dump_file.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "jitdump/write/safe_file.h"

namespace jitdump {

DumpFile::~DumpFile() {
  if (marker_ != nullptr) ::munmap(marker_, marker_size_);
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

Status DumpFile::Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules,
                        const FileHeaderFields& fields) {
  // O_RDWR, not O_WRONLY: mmap of the marker needs a readable descriptor. The file appears
  // with its header already in it: a process killed at start-up never leaves an empty dump.
  const FileHeader header = MakeFileHeader(fields);
  CreateRules rw = rules;
  rw.flags = O_RDWR;
  int fd = -1;
  const Status status = CreateWithContentsAt(dir.fd(), name, rw, &header, sizeof header, &fd);
  if (!status.ok()) return status;
  fd_ = fd;
  dir_fd_ = ::fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0);
  name_ = name;
  path_ = dir.path() + "/" + name;
  size_ = sizeof header;
  return Status::Ok();
}

Status DumpFile::Create(const std::string& path, mode_t mode, const FileHeaderFields& fields) {
  // Tests and tools name their own directories: no ownership rule beyond the file's own.
  const int fd = ::open(DirectoryOf(path).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::Error("open", errno);
  const FileHeader header = MakeFileHeader(fields);
  int file = -1;
  const Status status = CreateWithContentsAt(fd, std::string(BaseName(path)), CreateRules{O_RDWR, mode, 0}, &header,
                                             sizeof header, &file);
  if (!status.ok()) {
    ::close(fd);
    return status;
  }
  fd_ = file;
  dir_fd_ = fd;
  name_ = BaseName(path);
  path_ = path;
  size_ = sizeof header;
  return Status::Ok();
}

void DumpFile::Discard() {
  if (marker_ != nullptr) {
    ::munmap(marker_, marker_size_);
    marker_ = nullptr;
  }
  if (fd_ < 0) return;
  RemoveIfStillAt(dir_fd_, name_, fd_);
  ::close(fd_);
  fd_ = -1;
}

Status DumpFile::MapMarker() {
  if (fd_ < 0) return Status::Error("mmap (file not open)", EBADF);
  const long page = ::sysconf(_SC_PAGESIZE);
  marker_size_ = page > 0 ? static_cast<size_t>(page) : 4096;
  void* addr = ::mmap(nullptr, marker_size_, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd_, 0);
  if (addr == MAP_FAILED) return Status::Error("mmap PROT_EXEC", errno);
  marker_ = addr;
  return Status::Ok();
}

Status DumpFile::Append(const void* data, size_t size) {
  struct iovec iov {const_cast<void*>(data), size};
  return Append(&iov, 1);
}

Status DumpFile::Append(const struct iovec* iov, int iovcnt) {
  if (fd_ < 0) return Status::Error("write (file not open)", EBADF);
  return AppendWholeRecords(fd_, &size_, iov, iovcnt);
}

Status DumpFile::Close(uint64_t timestamp, bool sync) {
  if (fd_ < 0) return Status::Ok();
  uint8_t close_record[sizeof(CloseRecord)];
  EncodeClose(timestamp, close_record);
  Status status = Append(close_record, sizeof close_record);
  if (sync && ::fsync(fd_) != 0 && status.ok()) status = Status::Error("fsync", errno);
  if (dir_fd_ >= 0) {
    ::close(dir_fd_);
    dir_fd_ = -1;
  }
  if (marker_ != nullptr) {
    ::munmap(marker_, marker_size_);
    marker_ = nullptr;
  }
  if (::close(fd_) != 0 && status.ok()) status = Status::Error("close", errno);
  fd_ = -1;
  return status;
}

uint32_t CurrentElfMachine() {
  Elf64_Ehdr ehdr{};
  const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    const ssize_t got = ::pread(fd, &ehdr, sizeof ehdr, 0);
    ::close(fd);
    if (got == static_cast<ssize_t>(sizeof ehdr) && ehdr.e_ident[EI_MAG0] == ELFMAG0) return ehdr.e_machine;
  }
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return EM_NONE;
#endif
}

}  // namespace jitdump
