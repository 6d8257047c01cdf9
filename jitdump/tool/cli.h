// The command line of the `jitdump` tool: picks the command named by the first argument and
// parses the rest for it (CLI11), the same way for every command.
#pragma once

namespace jitdump::tool {

struct Command;

// `jitdump COMMAND [OPTIONS] OPERANDS...`; returns the exit code.
int Main(int argc, char** argv);

// Parses argv[1..] for `command` (argv[0] is the command's name), checks help, unknown options,
// --json and the operand count, then runs it; returns the exit code.
int RunCommand(const Command& command, int argc, char** argv);

}  // namespace jitdump::tool
