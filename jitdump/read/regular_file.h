// Reading a file the invoking user named (a dump on the command line): only a regular file, and
// never through a mapping. A dump another process may still be writing is read as a snapshot
// (its size at open decides what is read; a record still being written shows as a truncated
// tail), and a producer may cut a torn record back off the end (our agent does when a write
// fails on a full disk): a mapping's cut pages would fault (SIGBUS) where read(2) returns short.
// Files another user controls go through untrusted_file.h instead, which also refuses links.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/format/status.h"

namespace jitdump {

// Opens `path` read-only without blocking (a FIFO at the path is refused, unread) and accepts
// only a regular file; *size is its size now. On failure *fd is -1.
Status OpenRegularFile(const std::string& path, int* fd, uint64_t* size);

// Reads `path` (a regular file) whole into `out`.
Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out);

}  // namespace jitdump
