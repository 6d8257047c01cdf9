// Lines of text from a command's standard output or from a file, read in large blocks and
// handed out one at a time, so a multi-gigabyte perf script output never sits in memory.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::report {

using LineHandler = std::function<void(std::string_view line)>;

// Runs `argv` (argv[0] looked up in PATH) with stdin from /dev/null, its stdout read here and
// its stderr passed through, and calls `on_line` for every stdout line (without the newline).
// False when the command cannot be started, is killed, or exits non-zero; `error` says which.
bool ForEachOutputLine(const std::vector<std::string>& argv, const LineHandler& on_line, std::string* error);

// The same for a file ("-": standard input).
bool ForEachFileLine(const std::string& path, const LineHandler& on_line, std::string* error);

}  // namespace jitdump::report
