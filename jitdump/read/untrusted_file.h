// Opening files that another user controls: a JVM's dump and its agent's stats file, which
// root's `jitdump report` reads on that user's behalf. The user may have put anything at the
// path: a symlink to a root-only file, a FIFO nobody writes, a device, a file that keeps
// growing or shrinks while it is read. So a path's last component is never followed, the open
// never blocks, only a regular file is accepted, and the reasons given for a refusal say what
// the file is, never what it holds.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "jitdump/format/status.h"

namespace jitdump {

// Opens `path` read-only with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC and accepts only a
// regular file; *st is its fstat. A refusal's Status names what the path is ("a symbolic link,
// not followed", "a FIFO, not a regular file", ...), and *fd is then -1.
Status OpenUntrusted(const std::string& path, int* fd, struct stat* st);

// Reads a regular file of at most `max_bytes` whole (OpenUntrusted's rules); a larger one is
// refused unread.
Status ReadUntrusted(const std::string& path, uint64_t max_bytes, std::string* out);

}  // namespace jitdump
