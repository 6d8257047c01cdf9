// `jitdump copy`: copies a jitdump its producer may still be appending to, whole records at a
// time, optionally rewriting the pid fields on the way.
//
// scripts/bin/collect uses it to give host-side perf a dump written by a JVM in another pid
// namespace: the copy is named and stamped with the host pid (the header's pid and the pid/tid
// of every CODE_LOAD and CODE_MOVE), so `perf inject --jit` attributes the code to the host
// process. The source is read with pread at growing offsets and a record is copied only once
// all of it is there, so a record being written (or a torn tail after a crash) is never copied;
// the next call picks it up when it is complete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jitdump/format/dump_format.h"

namespace jitdump::tool {

struct FollowCopyOptions {
  std::optional<uint32_t> pid;  // rewrite every pid field to this
};

class FollowCopy {
 public:
  // Neither descriptor is owned: the caller opens and closes both.
  FollowCopy(int source_fd, int dest_fd, FollowCopyOptions options)
      : source_fd_(source_fd), dest_fd_(dest_fd), options_(options) {}

  // Copies every whole record the source holds now (the header first, once it is complete).
  // Returns false with *error set when the source is not a jitdump or reading or writing
  // fails; a copy that failed stays failed.
  bool CopyAvailable(std::string* error);

  uint64_t records() const { return records_; }         // records copied, header not counted
  uint64_t bytes() const { return offset_; }            // bytes copied, header included
  // Bytes past the last whole record at the last call: a record still being written, or the
  // torn tail of a producer that died mid-record.
  uint64_t pending_bytes() const { return pending_bytes_; }

 private:
  bool CopyHeader(std::string* error);
  bool WriteAll(const uint8_t* data, size_t size, std::string* error);
  // Rewrites the pid and tid of a CODE_LOAD or CODE_MOVE when options_.pid says so.
  void StampPid(uint8_t* record, const RecordHeader& header) const;

  int source_fd_;
  int dest_fd_;
  FollowCopyOptions options_;
  bool have_header_ = false;
  bool cross_endian_ = false;
  bool failed_ = false;
  uint64_t offset_ = 0;
  uint64_t records_ = 0;
  uint64_t pending_bytes_ = 0;
};

}  // namespace jitdump::tool
