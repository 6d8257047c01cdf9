// What `jitdump attach` and `jitdump run-dir` read about a running process from /proc: its
// credentials, namespaces, the files it maps, its flags. Everything here comes from the kernel
// except what the process's user controls (the paths it maps, its command line and
// environment), which is only matched, never executed or followed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::tool {

struct ProcessCredentials {
  uid_t euid = 0;
  gid_t egid = 0;
  std::vector<gid_t> groups;  // supplementary
  uint32_t nspid = 0;         // its pid in its own (innermost) pid namespace
};

// From /proc/PID/status; false (error set) when the process is gone or unreadable.
bool ReadCredentials(uint32_t pid, ProcessCredentials* credentials, std::string* error);

// Whether the process shares this process's namespace of `kind` ("mnt", "pid", ...).
bool SameNamespace(uint32_t pid, const char* kind);

// The first jitdump marker the process maps (a path ending in /jit-<digits>.dump, as the
// process sees it), or ""; `deleted` (if given) says whether the file has been deleted since.
std::string MappedDump(uint32_t pid, bool* deleted = nullptr);
// Whether one of the process's threads is named `name` (/proc/PID/task/*/comm).
bool HasThreadNamed(uint32_t pid, std::string_view name);
// Whether one of the process's descriptors is the file at `path` (as this process sees it).
bool HasOpenFile(uint32_t pid, const std::string& path);
// Whether it maps a libjitdumpagent*.so (an agent that disabled itself stays mapped).
bool MapsAgentLibrary(uint32_t pid);
// Whether it maps libjvm.so (a HotSpot JVM).
bool MapsLibjvm(uint32_t pid);

// HotSpot's attach socket for the process: its name in /tmp in the process's mount namespace
// (.java_pid<nspid>), and its path as this process reaches it (through /proc/PID/root).
std::string AttachSocketName(const ProcessCredentials& credentials);
std::string AttachSocketPath(uint32_t pid, const ProcessCredentials& credentials);
// The uid owning a socket at that path when it is not the process's user, else -1: a socket left
// by a killed process that had the same pid before (or planted by that uid), which HotSpot
// cannot remove from the sticky /tmp at its start and which no attach gets through.
int64_t ForeignAttachSocketOwner(uint32_t pid, const ProcessCredentials& credentials);

// Whether `flag` ("-XX:+DebugNonSafepoints") is on the command line or in JAVA_TOOL_OPTIONS,
// JDK_JAVA_OPTIONS or _JAVA_OPTIONS.
bool HasJvmFlag(uint32_t pid, const std::string& flag);

// The feature version of the JVM's JDK (17, 25), read from the `release` file of the JDK its
// executable belongs to (as a file its owner controls: untrusted_file.h), or 0 when unknown.
int JdkFeatureVersion(uint32_t pid);

}  // namespace jitdump::tool
