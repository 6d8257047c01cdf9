// Reading a file the invoking user named (a dump on the command line): only a regular file, and
// never through a mapping. A dump another process may still be writing is read as a snapshot
// (its size at open decides what is read; a record still being written shows as a truncated
// tail), and a producer may cut a torn record back off the end (our agent does when a write
// fails on a full disk): a mapping's cut pages would fault (SIGBUS) where read(2) returns short.
// Files another user controls go through untrusted_file.h instead, which also refuses links.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/format/status.h"

namespace jitdump {

// Opens `path` read-only without blocking (a FIFO at the path is refused, unread) and accepts
// only a regular file; *size is its size now. On failure *fd is -1.
Status OpenRegularFile(const std::string& path, int* fd, uint64_t* size);

// What both kinds of open share: `path` opened read-only without blocking (a FIFO at the path is
// refused, unread) and accepted only as a regular file, its last component followed when it is a
// symbolic link or not (refused: "a symbolic link, not followed"); *st is its fstat. A refusal's
// Status names what the path is ("a FIFO, not a regular file", ...); *fd is then -1.
Status OpenRegular(const std::string& path, bool follow_last_link, int* fd, struct stat* st);

// Reads from `fd` into buffer[0, limit) until the end of the file or `limit` bytes; *done is how
// many it read (fewer than the size fstat gave when the file shrank meanwhile).
Status ReadUpTo(int fd, void* buffer, size_t limit, size_t* done);

// Reads `path` (a regular file) whole into `out`.
Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out);

}  // namespace jitdump
