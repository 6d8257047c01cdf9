// A file of whole records behind a header, what the dump and the method table share: created
// with its header already in it (CreateWithContentsAt: never an empty file, never through a
// symlink, never over another user's or a live process's file), appended to whole records at a
// time, and removable only while it is still the file we created.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>

#include "jitdump/format/status.h"
#include "jitdump/write/safe_file.h"

namespace jitdump {

class RecordFile {
 public:
  RecordFile() = default;
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // Creates `name` in the held directory `dir` holding `header`, opened with `flags` (O_RDWR or
  // O_WRONLY) under `rules`. Holds a duplicate of the directory's descriptor for Discard.
  Status Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules, int flags,
                std::span<const uint8_t> header);
  // The same in the directory of `path`, opened once here (tests and tools name their own
  // directories: no ownership rule beyond the file's own).
  Status Create(const std::string& path, int flags, mode_t mode, std::span<const uint8_t> header);

  // AppendWholeRecords: every byte lands or the file is cut back to its last whole record.
  Status Append(const struct iovec* iov, int iovcnt);
  // fsyncs with `sync`, then closes both descriptors; the first error is returned. Safe to call
  // twice.
  Status Close(bool sync);
  // Closes and removes the file, if it is still the one we created.
  void Discard();

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void Hold(int fd, int dir_fd, std::string name, std::string path, uint64_t size);

  std::string path_;
  std::string name_;
  int dir_fd_ = -1;  // the directory the file was created in
  int fd_ = -1;
  uint64_t size_ = 0;  // bytes of the header and the whole records after it
};

}  // namespace jitdump
