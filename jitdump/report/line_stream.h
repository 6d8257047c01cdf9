// Lines of text from a file or standard input, read in large blocks and handed out one at a
// time, so a multi-gigabyte perf script output never sits in memory.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace jitdump::report {

using LineHandler = std::function<void(std::string_view line)>;

// Calls `on_line` for every line of `path` ("-": standard input), without the newline; a last
// line without one counts. False with `error` when it cannot be opened or read.
bool ForEachFileLine(const std::string& path, const LineHandler& on_line, std::string* error);

}  // namespace jitdump::report
