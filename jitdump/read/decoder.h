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
  // Leave DEBUG_INFO and samply's inline records undecoded (Record::deferred), for a reader that
  // needs few of them (a report needs those of the loads its samples land in): they are most
  // of a dump's decoded size. DecodeDeferred decodes one when it is needed.
  bool defer_side_records = false;
};

// Decodes the first `size` bytes of the open file `fd` (a regular file: untrusted_file.h) through
// a window of pread calls, never mapping it: a file cut shorter while it is read shows as a
// truncated tail, not a SIGBUS. Fails (and leaves no records) when reading fails or the decoded
// records would take more than limits.memory; a file that is not a jitdump is no failure
// (header_ok false, as Parse). *decoded_bytes, when given, is what the records took.
Status ParseFile(int fd, uint64_t size, const FileLimits& limits, JitDump* dump, uint64_t* decoded_bytes = nullptr);

// Decodes dump->records[index], a record ParseFile deferred, from the same open file `fd`: its
// body as ParseFile would have decoded it, its problems appended to dump->problems. Fails (the
// record stays deferred) when its bytes can no longer be read (the file shrank) or decoding it
// would take more than `memory_limit` bytes (0: no limit); *decoded_bytes is what it took. A
// record that is not deferred is left as it is.
Status DecodeDeferred(int fd, JitDump* dump, size_t index, uint64_t memory_limit = 0, uint64_t* decoded_bytes = nullptr);

}  // namespace jitdump
