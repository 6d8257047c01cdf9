// Where options come from, in order of precedence (lowest first): the file named by config=,
// the JITDUMPAGENT_OPTIONS environment variable, the -agentpath / jcmd option string.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "agent/core/options.h"
#include "jitdump/format/text.h"

namespace jitdump_agent {

inline constexpr const char* kOptionsEnvironmentVariable = "JITDUMPAGENT_OPTIONS";

// A config file: key=value per line (or comma-separated), '#' starts a comment.
// Returns the equivalent option string.
std::string ConfigFileToOptions(std::string_view contents);

// The largest config file read; a larger one is refused with one message naming this limit.
inline constexpr size_t kMaxConfigFileBytes = 1u << 20;
// Errors reported per config file; the rest are counted in one more line.
inline constexpr size_t kMaxConfigFileErrors = 10;

// Reads the config file at `path` into *contents. Returns "" on success, else why not (for the
// message): only a regular file of at most kMaxConfigFileBytes is read. Symlinks are followed
// (Kubernetes ConfigMap volumes are symlink farms). A FIFO or device is refused without
// blocking, and so is a /proc or /sys file (they report size 0 and reading some of them has
// effects: /proc/kmsg consumes the kernel log).
std::string ReadConfigFile(const std::string& path, std::string* contents);

// Merges the three sources into `options`. `read_file` (ReadConfigFile, or a test's) returns
// "" or why the file cannot be read (that becomes an error on the config key).
using ConfigReader = std::string (*)(const std::string& path, std::string* contents);
ParseResult LoadOptions(std::string_view command_line, const char* environment, ConfigReader read_file,
                        Options& options);

// "%p" in a path option is the JVM's pid (jitdump/format/text.h: the report expands it the same way).
using jitdump::ExpandPid;

}  // namespace jitdump_agent
