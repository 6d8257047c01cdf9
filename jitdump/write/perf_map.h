// perf-<pid>.map lines: "START SIZE name\n", START and SIZE in lowercase hex without 0x.
// perf, simpleperf and bcc take everything after SIZE up to the newline as the name, so spaces
// are fine; a newline or carriage return inside a name would split the line and is replaced.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitdump {

// Appends one line to `out`.
void AppendPerfMapLine(uint64_t start, uint64_t size, std::string_view name, std::string& out);

}  // namespace jitdump
