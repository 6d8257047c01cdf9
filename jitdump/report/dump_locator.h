// Where the dump a marker names is on this machine. The marker holds the path the JVM used,
// which is right on the host for a JVM in perf's own namespaces, but for a container it names a
// file inside the container: there the dump is reachable through /proc/<pid>/root while the
// JVM lives, or as a copy `scripts/collect watch` made (named by the host pid, its pid
// fields rewritten) or a user copied (named by the container's pid) into a --dumps directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/report/process_map.h"

namespace jitdump::report {

// The files to try for `marker`, best first: each --dumps directory's jit-<host pid>.dump and
// jit-<container pid>.dump, the marker's own path, and the path under /proc/<pid>/root. A
// candidate is the right file when its header pid is one of the two pids (AcceptsDump).
std::vector<std::string> DumpCandidates(const DumpMarker& marker, const std::vector<std::string>& dump_dirs);

// Whether a dump whose header says `header_pid` can be the one `marker` names.
bool AcceptsDump(const DumpMarker& marker, uint32_t header_pid);

// jit-<pid>.dump files in the --dumps directories: pid -> path (the first directory wins).
std::vector<std::pair<uint32_t, std::string>> DumpsInDirectories(const std::vector<std::string>& dump_dirs);

}  // namespace jitdump::report
