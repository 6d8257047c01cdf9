// The decoder: a whole jitdump held in memory (any producer, either byte order) to a JitDump.
// It never trusts a length it has not checked against the record's total_size and the bytes
// available, never allocates by an unchecked count, and never throws: every defect it meets
// becomes a Problem with the byte offset it is about, and decoding goes on where total_size
// allows. The rules a consumer applies on top of a readable file are in consumer_rules.h.
#pragma once

#include <cstdint>
#include <span>

#include "jitdump/format/status.h"

#include "jitdump/read/dump.h"

namespace jitdump {

// Decodes `data`, the whole file.
JitDump Parse(std::span<const uint8_t> data);

// How ParseFile reads a file another user may control (its dump, given to root's report).
struct FileLimits {
  size_t window = 1 << 20;  // bytes read at a time (grown for a larger record)
  uint64_t memory = 0;      // what the decoded records may take, roughly, in bytes (0: no limit)
};

// Decodes the first `size` bytes of the open file `fd` (a regular file: untrusted_file.h) through
// a window of pread calls, never mapping it: a file cut shorter while it is read shows as a
// truncated tail, not a SIGBUS. Fails (and leaves no records) when reading fails or the decoded
// records would take more than limits.memory; a file that is not a jitdump is no failure
// (header_ok false, as Parse). *decoded_bytes, when given, is what the records took.
Status ParseFile(int fd, uint64_t size, const FileLimits& limits, JitDump* dump, uint64_t* decoded_bytes = nullptr);

}  // namespace jitdump
