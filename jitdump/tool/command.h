// What a subcommand of the `jitdump` tool is, and the helpers every command shares.
//
// A command is one file under commands/ defining a `Command`: its name, the texts `jitdump
// --help` and `jitdump NAME --help` print, whether it writes JSON, how many operands it takes,
// its own options, and the function that runs it. cli.cc parses the command line for every
// command alike from that description (help, unknown options, --json, operand counts are
// handled there, with the same messages and exit codes for all); commands.cc lists them.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/read/dump.h"

namespace jitdump::tool {

// Exit codes of every command.
inline constexpr int kExitOk = 0;       // success (check: valid, warnings allowed)
inline constexpr int kExitInvalid = 1;  // invalid input file, address not found
inline constexpr int kExitUsage = 2;    // usage error or unreadable file

enum class JsonMode {
  kNone,      // --json is a usage error
  kOptional,  // text by default, JSON with --json
  kRequired,  // JSON is the only output; --json must be given
};

// An option of one command besides --json and --help.
struct OptionSpec {
  std::string_view name;        // "--force"
  std::string_view value_name;  // "DIR" for an option taking a value; empty for a flag
  bool repeatable = false;      // may be given several times (Invocation::Values lists them all)
};

struct Command;

// One run of a command: what the command line said.
struct Invocation {
  const Command* command = nullptr;
  bool json = false;
  std::vector<std::string> operands;
  std::set<std::string, std::less<>> flags;                      // the OptionSpec flags given
  std::map<std::string, std::string, std::less<>> values;        // the OptionSpec options given
  std::map<std::string, std::vector<std::string>, std::less<>> lists;  // the repeatable ones, in order

  bool Flag(std::string_view name) const { return flags.count(name) != 0; }
  const std::string* Value(std::string_view name) const;  // nullptr when not given
  std::vector<std::string> Values(std::string_view name) const;  // a repeatable option's values
  // Prints "jitdump: MESSAGE" and the command's usage to stderr; returns kExitUsage.
  int UsageError(const std::string& message) const;
};

struct Command {
  std::string_view name;      // "info"
  std::string_view synopsis;  // "info FILE": how `jitdump --help` lists it
  std::string_view summary;   // one line for `jitdump --help`
  std::string_view usage;     // what `jitdump NAME --help` prints
  JsonMode json = JsonMode::kNone;
  size_t min_operands = 1;
  size_t max_operands = 1;       // SIZE_MAX: no limit
  std::string_view operands;     // "exactly one FILE": the message when the count is wrong
  std::span<const OptionSpec> options = {};
  int (*run)(const Invocation&) = nullptr;
};

// Every command, in the order `jitdump --help` lists them (commands.cc).
std::span<const Command* const> AllCommands();

// ---- helpers for commands that read a dump ----

// Reads and decodes `path`. On an unreadable file prints "jitdump: PATH: why" and returns false
// (the caller exits kExitUsage).
bool LoadDump(const std::string& path, JitDump* dump);

// Like LoadDump, and prints the problems of a file that is not a jitdump we can read at all
// (the caller exits kExitInvalid). Returns kExitOk when `dump` is usable.
int LoadReadableDump(const std::string& path, JitDump* dump);

// PATH.inline, written by `jitdump strip-inline`, when it exists and is a readable jitdump.
bool LoadSidecar(const std::string& path, JitDump* sidecar);

// Names and file names come from the file: a crafted dump must not drive the terminal, so
// control characters are shown as \xNN in text output.
std::string Shown(std::string_view text);

}  // namespace jitdump::tool
