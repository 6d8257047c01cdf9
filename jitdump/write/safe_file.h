// Creating files in directories other users may write to (/tmp, shared volumes) without
// following planted symlinks, clobbering someone else's file or removing a file another live
// process still writes. Every operation is relative to a directory descriptor held open since
// start-up (HeldDirectory): once the agent holds its output directory, renaming it away and
// planting a symlink in its place redirects nothing.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>

#include "jitdump/format/status.h"
#include "jitdump/format/text.h"

namespace jitdump {

// An output directory, created if missing (mkdir -p) and then held open with
// O_PATH|O_DIRECTORY: every create, link, rename and unlink below goes through this
// descriptor, never through the path again.
class HeldDirectory {
 public:
  HeldDirectory() = default;
  ~HeldDirectory();
  HeldDirectory(HeldDirectory&& other) noexcept;
  HeldDirectory& operator=(HeldDirectory&& other) noexcept;
  HeldDirectory(const HeldDirectory&) = delete;
  HeldDirectory& operator=(const HeldDirectory&) = delete;

  // Creates `path` (directories made get `mode`) and holds it. Refuses (EPERM) a directory
  // other users could rename our files in: one owned by a user other than us and root, or
  // writable by others (or by a group not our own) without the sticky bit. /tmp (root, 1777)
  // passes; a 0777 shared directory or one owned by another user does not.
  Status Open(const std::string& path, mode_t mode);
  // Holds the subdirectory `name` of `parent`, creating it (mode) if missing; it must be a real
  // directory (no symlink) owned by us.
  Status OpenChild(const HeldDirectory& parent, const std::string& name, mode_t mode);

  // A second holder of the same directory (its own descriptor); not open if dup fails.
  HeldDirectory Duplicate() const;

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // The path as given when opened (for messages; never used to reach the directory again).
  const std::string& path() const { return path_; }
  // Set when Open refused the directory as unsafe: its owner and mode, for the message.
  uid_t refused_owner() const { return refused_owner_; }
  mode_t refused_mode() const { return refused_mode_; }

 private:
  int fd_ = -1;
  std::string path_;
  uid_t refused_owner_ = 0;
  mode_t refused_mode_ = 0;
};

// The errno of a create that found its name taken by a file of ours that is not stale: another
// live process (same user, same pid in another pid namespace) holds it locked, or it was
// written after `not_before_ns`. The caller picks a distinct name.
inline constexpr int kInUse = EBUSY;

// What a create may do about a file of ours already at the name.
struct CreateRules {
  int flags = O_RDWR;            // O_RDWR or O_WRONLY, plus e.g. O_APPEND
  mode_t mode = 0600;
  // A file of ours modified at or after this CLOCK_REALTIME time (ns) is not a stale leftover
  // of an earlier process: it is never removed (kInUse). 0: no such rule.
  int64_t not_before_ns = 0;
};

// Opens `name` in `dir` as a new regular file with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and
// holds a shared flock on it for as long as *fd stays open: the mark of a live writer. If
// something already exists there, it is removed only when it is a stale file: a regular file
// owned by the calling user that no live process holds locked (an earlier process with the same
// pid). A symlink, a directory or another user's file is left alone (EEXIST); a live or recent
// file of ours too (kInUse). On success *fd is open and the file is empty.
Status CreateExclusiveAt(int dir, const std::string& name, const CreateRules& rules, int* fd);

// Like CreateExclusiveAt, but the file appears at `name` already holding `contents`: it is
// written as an unnamed O_TMPFILE (locked before it has a name) and linked into place, so a
// process killed at any moment leaves either no file or one that starts with all of `contents`
// (a jitdump header, say), never an empty one. *fd is then open on the named file (not the
// unnamed one, so /proc/self/maps and perf's MMAP events name it), locked, positioned after
// `contents`. Where O_TMPFILE or /proc is unavailable it falls back to CreateExclusiveAt
// followed by a write, removing the file if the write fails.
Status CreateWithContentsAt(int dir, const std::string& name, const CreateRules& rules, const void* contents,
                            size_t size, int* fd);

// Creates a new file with a fresh random name `prefix` + 12 characters in `dir`
// (O_CREAT|O_EXCL: nothing planted can be followed), for a file to be renamed into place,
// marked live as CreateExclusiveAt marks it. Sets *name to the name made.
Status CreateTemporaryAt(int dir, const std::string& prefix, int flags, mode_t mode, int* fd, std::string* name);

// Path forms of the above for callers that do not hold the directory (tools, tests): the
// directory of `path` is opened once and the file created relative to it.
Status CreateExclusive(const std::string& path, int flags, mode_t mode, int* fd);
Status CreateWithContents(const std::string& path, int flags, mode_t mode, const void* contents, size_t size,
                          int* fd);

// The directory holding `path`: "." for a bare name, "/" for a file at the root.
std::string DirectoryOf(const std::string& path);

// write(2) until all `size` bytes are written (retrying EINTR and short writes); false on error,
// with errno set.
bool WriteAll(int fd, const void* data, size_t size);

// Removes `name` from the directory `dir_fd` only while it still names the file open as `fd`
// (a file this process created and is abandoning: never what someone put there since).
void RemoveIfStillAt(int dir_fd, const std::string& name, int fd);

// Appends whole records at *end (the end of the last whole record in `fd`) with pwritev: all
// bytes land and *end moves past them, or, on failure, the file is cut back to *end, so a reader
// never sees a torn record (the dump's and the method table's rule).
Status AppendWholeRecords(int fd, uint64_t* end, const struct iovec* iov, int iovcnt);

// mkdir -p with `mode` for the directories it creates. Existing components must be
// directories (a symlink to a directory is accepted only for components that already exist
// and are owned by the user or root, as /tmp or a home directory may be).
Status MakeDirectories(const std::string& path, mode_t mode);

}  // namespace jitdump
