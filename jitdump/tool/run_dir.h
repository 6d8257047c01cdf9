// The run directory perf-java records into, as the C++ half of perf-java (`jitdump run-dir`):
// the file, ownership and trust decisions a shell script running as root gets wrong.
//
// The rule: when root works for another user, nothing that user can write is followed, trusted
// or written through with root's rights. A run directory is therefore new (made here, refused if
// anything is at its name), every directory above it can be changed only by root or the caller
// (so nobody can swap it for a symlink between two commands), and its canonical path is what the
// caller uses afterwards. The JVM's user owns one part, RUN/jit, where its agent writes the dump;
// root reads from it and never writes into it: before `perf inject` (which writes its jitted ELF
// images beside the dump it reads) RUN/jit is moved aside and replaced by a directory of root's
// own holding copies of the dumps.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/format/status.h"

namespace jitdump::tool {

// Why a directory (or one above it) cannot be trusted, or "" when it can: owned by root or
// `uid`, and writable by nobody else (group or others) unless it is sticky (/tmp). `dir_fd` is an
// open descriptor of the directory (O_PATH will do); every directory above it is checked too.
// `path` names it in the message.
std::string UntrustedAncestry(int dir_fd, uid_t uid, const std::string& path);

// The canonical path of an open directory (through /proc/self/fd), or "" when unknown.
std::string PathOf(int dir_fd);

struct NewRun {
  std::string path;  // canonical
  int fd = -1;       // the run directory, held (O_PATH); the caller closes it
};

// Creates the run directory `path` (mode 0755 less the umask) and RUN/jit inside it. Refused when
// anything exists at `path`, or when a directory above it can be changed by another user.
// With `jvm_uid`/`jvm_gid` (as root, for a JVM of another user) RUN/jit is handed to that user
// (fchown of the directory just made, never through a path) and must be reachable by it: a
// process with its credentials checks it can write there. Everything made is removed again on
// failure. `error` says what is wrong and what to do.
bool CreateRunDirectory(const std::string& path, bool for_jvm, uid_t jvm_uid, gid_t jvm_gid,
                        const std::vector<gid_t>& jvm_groups, NewRun* run, std::string* error);

// An existing run directory a subcommand works on: a real directory (no symlink), owned by the
// caller (or root), writable by nobody else, in a trusted ancestry. Sets *run on success.
bool OpenRunDirectory(const std::string& path, NewRun* run, std::string* error);

// Before `perf inject` on RUN: when RUN/jit belongs to another user (the JVM's), moves it aside
// to RUN/jit-uid<UID> and makes a new RUN/jit of the caller's holding copies of its dumps
// (jit-<pid>.dump and jit-<pid>-N/jit-<pid>.dump, whole records only; a symlink, FIFO or file of
// a third user is skipped, named in `notes`). Nothing to do when RUN/jit is the caller's already.
bool TakeDumps(int run_fd, const std::string& run_path, std::vector<std::string>* notes, std::string* error);

}  // namespace jitdump::tool
