// Where the dump a marker names is on this machine. The marker holds the path the JVM used,
// which is right on the host for a JVM in perf's own namespaces, but for a container it names a
// file inside the container: there the dump is reachable through /proc/<pid>/root while the
// JVM lives, or as a copy `scripts/bin/collect watch` made (named by the host pid, its pid
// fields rewritten) or a user copied (named by the container's pid) into a --dumps directory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/report/process_map.h"

namespace jitdump::report {

// A second JVM with the pid of a live one writing into the same directory (two containers
// sharing a volume, each JVM pid 1) writes DIR/jit-<pid>-N/jit-<pid>.dump, N = 2..9: the agent's
// subdirectory name "jit-<pid>-N" for such a dump path, or "" for a dump outside one.
std::string SamePidSubdirectory(std::string_view path, uint32_t dump_pid);

// The files to try for `marker`, best first: for a marker in a jit-<pid>-N subdirectory, each
// --dumps directory's same-named subdirectory's dump; each --dumps directory's
// jit-<host pid>.dump and jit-<container pid>.dump, the marker's own path, and the path under
// /proc/<pid>/root. A candidate is the right file when its header pid is one of the two pids
// (AcceptsDump).
std::vector<std::string> DumpCandidates(const DumpMarker& marker, const std::vector<std::string>& dump_dirs);

// Whether a dump whose header says `header_pid` can be the one `marker` names.
bool AcceptsDump(const DumpMarker& marker, uint32_t header_pid);

// A dump found in a --dumps directory by its name, for the pid of its name.
struct FoundDump {
  uint32_t pid = 0;
  std::string path;  // DIR/jit-<pid>.dump, else DIR/jit-<pid>-N/jit-<pid>.dump with the lowest N
  // The other dumps of this pid in the same directory (its jit-<pid>-N subdirectories): JVMs
  // with the same pid, which nothing but a marker in the recording tells apart.
  std::vector<std::string> others;
};

// The jit-<pid>.dump files in the --dumps directories and their jit-<pid>-N subdirectories, one
// per pid (the first directory wins), in pid order.
std::vector<FoundDump> DumpsInDirectories(const std::vector<std::string>& dump_dirs);

}  // namespace jitdump::report
