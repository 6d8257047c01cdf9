// The JSON of what several commands print about a dump (info, records): its header and its
// truncated tail, spelled the same everywhere.
#pragma once

#include "jitdump/read/dump.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {

// {magic, version, total_size, elf_mach, pad1, pid, timestamp, flags}, host byte order.
Json HeaderJson(const FileHeader& header);

// {offset, bytes, total_size} of a final record cut short, or null.
Json TruncatedTailJson(const JitDump& dump);

}  // namespace jitdump::tool
