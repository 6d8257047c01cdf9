// Creating files in directories other users may write to (/tmp, shared volumes) without
// following planted symlinks or clobbering someone else's file.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include <string>

#include "jitdump/status.h"

namespace jitdump {

// Opens `path` as a new regular file with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and `flags`
// (O_RDWR or O_WRONLY). If something already exists there, it is replaced only when it is a
// regular file owned by the calling user (a stale file from an earlier process with the same
// pid); a symlink, a directory or another user's file is left alone and the call fails with
// EEXIST. On success *fd is open and the file is empty.
Status CreateExclusive(const std::string& path, int flags, mode_t mode, int* fd);

// Like CreateExclusive, but the file appears at `path` already holding `contents`: it is written
// as an unnamed O_TMPFILE and linked into place, so a process killed at any moment leaves either
// no file or one that starts with all of `contents` (a jitdump header, say), never an empty one.
// *fd is then open on `path` itself (not the unnamed file, so /proc/self/maps and perf's MMAP
// events name `path`), positioned after `contents`. Where O_TMPFILE or /proc is unavailable it
// falls back to CreateExclusive followed by a write, removing the file if the write fails.
Status CreateWithContents(const std::string& path, int flags, mode_t mode, const void* contents, size_t size,
                          int* fd);

// The directory holding `path`: "." for a bare name, "/" for a file at the root.
std::string DirectoryOf(const std::string& path);

// write(2) until all `size` bytes are written (retrying EINTR and short writes); false on error,
// with errno set.
bool WriteAll(int fd, const void* data, size_t size);

// mkdir -p with `mode` for the directories it creates. Existing components must be
// directories (a symlink to a directory is accepted only for components that already exist
// and are owned by the user or root, as /tmp or a home directory may be).
Status MakeDirectories(const std::string& path, mode_t mode);

}  // namespace jitdump
