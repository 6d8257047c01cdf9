// A jitdump file being written: safe creation, header, perf's marker mapping, whole-record
// appends, and the closing record.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <string>

#include "jitdump/write/encoder.h"
#include "jitdump/write/record_file.h"
#include "jitdump/write/safe_file.h"
#include "jitdump/format/status.h"

namespace jitdump {

class DumpFile {
 public:
  DumpFile() = default;
  ~DumpFile();
  DumpFile(const DumpFile&) = delete;
  DumpFile& operator=(const DumpFile&) = delete;

  // Creates `name` in the held directory `dir` holding the header (see CreateWithContentsAt:
  // never an empty file, never through a symlink, never over another user's file or a live
  // one; kInUse when a live process holds the name). The file stays flock-ed (shared) while
  // open: the mark another process with the same pid looks for before removing it as stale.
  Status Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules,
                const FileHeaderFields& header);
  // The same in the directory of `path` (tests and tools).
  Status Create(const std::string& path, mode_t mode, const FileHeaderFields& header);

  // Closes and removes the file (a dump abandoned at start-up, before any record).
  void Discard();

  // Maps the first page PROT_READ|PROT_EXEC. perf record sees this mapping as an MMAP event
  // naming the file, which is how perf inject --jit finds the dump. Fails on noexec mounts.
  Status MapMarker();

  // Appends whole records. All bytes land or, on failure, the file is cut back to the end of
  // the last whole record, so a reader never sees a torn record from us.
  Status Append(const struct iovec* iov, int iovcnt);
  Status Append(const void* data, size_t size);

  // Writes JIT_CODE_CLOSE, fsyncs with `sync` (the bytes survive a machine crash), unmaps the
  // marker and closes every descriptor it holds. Safe to call twice.
  Status Close(uint64_t timestamp, bool sync = false);

  bool is_open() const { return file_.is_open(); }
  bool marker_mapped() const { return marker_ != nullptr; }
  uint64_t size() const { return file_.size(); }
  const std::string& path() const { return file_.path(); }
  int fd() const { return file_.fd(); }

 private:
  void Unmap();

  RecordFile file_;
  void* marker_ = nullptr;
  size_t marker_size_ = 0;
};

// ELF e_machine of the running process, as perf's agent reports it (read from /proc/self/exe).
uint32_t CurrentElfMachine();

}  // namespace jitdump
