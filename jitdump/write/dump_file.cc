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

DumpFile::~DumpFile() { Unmap(); }

void DumpFile::Unmap() {
  if (marker_ == nullptr) return;
  ::munmap(marker_, marker_size_);
  marker_ = nullptr;
}

// O_RDWR, not O_WRONLY: mmap of the marker needs a readable descriptor. The file appears with
// its header already in it: a process killed at start-up never leaves an empty dump.
Status DumpFile::Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules,
                        const FileHeaderFields& fields) {
  const FileHeader header = MakeFileHeader(fields);
  return file_.Create(dir, name, rules, O_RDWR, {reinterpret_cast<const uint8_t*>(&header), sizeof header});
}

Status DumpFile::Create(const std::string& path, mode_t mode, const FileHeaderFields& fields) {
  const FileHeader header = MakeFileHeader(fields);
  return file_.Create(path, O_RDWR, mode, {reinterpret_cast<const uint8_t*>(&header), sizeof header});
}

void DumpFile::Discard() {
  Unmap();
  file_.Discard();
}

Status DumpFile::MapMarker() {
  if (!file_.is_open()) return Status::Error("mmap (file not open)", EBADF);
  const long page = ::sysconf(_SC_PAGESIZE);
  marker_size_ = page > 0 ? static_cast<size_t>(page) : 4096;
  void* addr = ::mmap(nullptr, marker_size_, PROT_READ | PROT_EXEC, MAP_PRIVATE, file_.fd(), 0);
  if (addr == MAP_FAILED) return Status::Error("mmap PROT_EXEC", errno);
  marker_ = addr;
  return Status::Ok();
}

Status DumpFile::Append(const void* data, size_t size) {
  struct iovec iov {const_cast<void*>(data), size};
  return Append(&iov, 1);
}

Status DumpFile::Append(const struct iovec* iov, int iovcnt) { return file_.Append(iov, iovcnt); }

Status DumpFile::Close(uint64_t timestamp, bool sync) {
  if (!file_.is_open()) return Status::Ok();
  uint8_t close_record[sizeof(CloseRecord)];
  EncodeClose(timestamp, close_record);
  Status status = Append(close_record, sizeof close_record);
  Unmap();
  const Status closed = file_.Close(sync);
  return status.ok() ? closed : status;
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
