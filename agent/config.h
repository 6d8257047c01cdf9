// Where options come from, in order of precedence (lowest first): the file named by config=,
// the JITDUMPAGENT_OPTIONS environment variable, the -agentpath / jcmd option string.
#pragma once

#include <string>
#include <string_view>

#include "agent/options.h"

namespace jitdump_agent {

inline constexpr const char* kOptionsEnvironmentVariable = "JITDUMPAGENT_OPTIONS";

// A config file: key=value per line (or comma-separated), '#' starts a comment.
// Returns the equivalent option string.
std::string ConfigFileToOptions(std::string_view contents);

// Merges the three sources into `options`. `read_file` returns false when the file cannot be
// read (that becomes an error on the config key).
ParseResult LoadOptions(std::string_view command_line, const char* environment,
                        bool (*read_file)(const std::string& path, std::string* contents), Options& options);

// Replaces "%p" with the pid and "%%" with "%".
std::string ExpandPid(std::string_view text, uint32_t pid);

}  // namespace jitdump_agent
