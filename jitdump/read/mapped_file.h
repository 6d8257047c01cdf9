// Reading a dump file. A dump of several GB needs no copy in memory: MappedFile maps it read-only
// and Parse reads straight from the page cache (the decoded JitDump keeps only names and line
// tables, not the code bytes). ReadWholeFile copies a file into a buffer, for callers that keep
// or change the bytes.
//
// Both take a snapshot of a dump another process may still be writing: the size at open decides
// what is read, and a record still being written shows as a truncated tail. One case differs: a
// producer may cut a torn record back off the end of the file (our agent does when a write
// fails on a full disk); if that happens between Open and Parse, reading the cut pages of a
// mapping faults (SIGBUS), where a copy would not.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jitdump/format/status.h"

namespace jitdump {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path`, which must be a regular file; an empty file gives empty bytes(). Replaces what
  // was open before, also on failure.
  Status Open(const std::string& path);

  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  void Reset();

  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::span<const uint8_t> bytes_;
};

// Reads `path` (a regular file) whole into `out`.
Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out);

}  // namespace jitdump
