// The command line of the jitdump tool (cli.h): the main usage, built from the commands'
// descriptions, and one CLI11 parse for every command, with one set of checks (help, unknown
// options, --json, operand counts) before a command runs.
#include "jitdump/tool/cli.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "jitdump/tool/command.h"

namespace jitdump::tool {
namespace {

void Print(std::FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

// `jitdump --help`: the commands and what they do, from their descriptions.
std::string MainUsage() {
  std::string usage =
      "usage: jitdump COMMAND [OPTIONS] FILE [ARGS]\n"
      "\n"
      "Inspect and validate perf jitdump files (jit-<pid>.dump).\n"
      "\n"
      "commands:\n";
  std::string json_commands;
  for (const Command* command : AllCommands()) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-22.*s %.*s\n", static_cast<int>(command->synopsis.size()),
                  command->synopsis.data(), static_cast<int>(command->summary.size()), command->summary.data());
    usage += line;
    if (command->json != JsonMode::kNone) json_commands += (json_commands.empty() ? "" : ", ") + std::string(command->name);
  }
  usage += "\noptions: --json (" + json_commands + "), --help (every command)\n";
  usage += "exit status: 0 ok, 1 invalid file or address not found, 2 usage error or unreadable file\n";
  return usage;
}

int MainUsageError(const std::string& message) {
  std::fprintf(stderr, "jitdump: %s\n", message.c_str());
  Print(stderr, MainUsage());
  return kExitUsage;
}

// Parses the arguments after the command name. Unknown options are collected, not fatal, so
// that --help still works next to them and the message can name them.
struct Parsed {
  Invocation invocation;
  bool help = false;
  std::vector<std::string> unknown_options;
};

int ParseArguments(const Command& command, int argc, char** argv, Parsed* parsed) {
  CLI::App app;
  app.set_help_flag();  // the command's own usage text is the help
  app.allow_extras();
  Invocation& invocation = parsed->invocation;
  invocation.command = &command;
  // Flags take no value: --json=0 is a usage error, not a way to turn JSON off.
  app.add_flag("-h,--help", parsed->help)->disable_flag_override();
  app.add_flag("--json", invocation.json)->disable_flag_override();
  for (const OptionSpec& spec : command.options) {
    if (spec.value_name.empty()) {
      app.add_flag_callback(std::string(spec.name), [&invocation, spec] { invocation.flags.emplace(spec.name); })
          ->disable_flag_override();
    } else if (spec.repeatable) {
      // One value per occurrence (allow_extra_args(false)), so `--dumps A FILE` leaves FILE an operand.
      app.add_option_function<std::vector<std::string>>(
             std::string(spec.name),
             [&invocation, spec](const std::vector<std::string>& v) { invocation.lists[std::string(spec.name)] = v; })
          ->allow_extra_args(false)
          ->type_name(std::string(spec.value_name));
    } else {
      app.add_option_function<std::string>(
             std::string(spec.name),
             [&invocation, spec](const std::string& v) { invocation.values[std::string(spec.name)] = v; })
          ->type_name(std::string(spec.value_name));
    }
  }
  app.add_option("operands", invocation.operands);
  try {
    app.parse(argc, argv);  // argv[0] is skipped: here it is the command name
  } catch (const CLI::ParseError& e) {
    return invocation.UsageError(std::string(command.name) + ": " + e.what());
  }
  for (const std::string& extra : app.remaining()) {
    if (extra != "--") parsed->unknown_options.push_back(extra);
  }
  return kExitOk;
}

}  // namespace

int RunCommand(const Command& command, int argc, char** argv) {
  Parsed parsed;
  if (const int status = ParseArguments(command, argc, argv, &parsed); status != kExitOk) return status;
  const Invocation& invocation = parsed.invocation;
  const std::string name(command.name);
  if (parsed.help) {
    Print(stdout, command.usage);
    return kExitOk;
  }
  if (!parsed.unknown_options.empty()) {
    return invocation.UsageError("unknown option " + parsed.unknown_options.front() + " for " + name);
  }
  if (command.json == JsonMode::kNone && invocation.json) return invocation.UsageError(name + " has no --json");
  if (command.json == JsonMode::kRequired && !invocation.json) return invocation.UsageError(name + " needs --json");
  const size_t count = invocation.operands.size();
  if (count < command.min_operands || count > command.max_operands) {
    return invocation.UsageError(name + " takes " + std::string(command.operands));
  }
  return command.run(invocation);
}

int Main(int argc, char** argv) {
  if (argc < 2) return MainUsageError("missing command");
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    Print(stdout, MainUsage());
    return kExitOk;
  }
  for (const Command* command : AllCommands()) {
    if (command->name != name) continue;
    try {
      return RunCommand(*command, argc - 1, argv + 1);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "jitdump %s: out of memory\n", argv[1]);
      return kExitUsage;
    } catch (const std::exception& e) {
      // No input, however hostile, may end the tool with an uncaught exception (an abort):
      // one line, escaped (what() may quote the input), and the usage error's status.
      std::fprintf(stderr, "jitdump %s: error: %s\n", argv[1], Shown(e.what()).c_str());
      return kExitUsage;
    }
  }
  return MainUsageError("unknown command " + std::string(name));
}

}  // namespace jitdump::tool
