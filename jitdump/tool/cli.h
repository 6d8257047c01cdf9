// The command line of the `jitdump` tool: picks the command named by the first argument and
// parses the rest for it (CLI11), the same way for every command.
#pragma once

namespace jitdump::tool {

// `jitdump COMMAND [OPTIONS] OPERANDS...`; returns the exit code.
int Main(int argc, char** argv);

}  // namespace jitdump::tool
