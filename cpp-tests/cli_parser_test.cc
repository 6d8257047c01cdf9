// The jitdump tool's one argument parser, on a command made up for the test: what a command
// declares (JSON mode, operand count, its own flags and valued options) is what it gets, and
// every way of getting the command line wrong is a usage error (exit 2) naming the problem.
#include "jitdump/tool/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jitdump/tool/command.h"

namespace jitdump::tool {
namespace {

Invocation g_seen;  // what the last run of the test command was given

int Record(const Invocation& invocation) {
  g_seen = invocation;
  return 7;  // distinct from every exit code the parser itself returns
}

constexpr OptionSpec kOptions[] = {{"--force", ""}, {"--output", "DIR"}};

const Command kTestCommand{
    .name = "probe",
    .synopsis = "probe FILE",
    .summary = "a command for the parser test",
    .usage = "usage: jitdump probe [--json] [--force] [--output DIR] FILE [MORE]\n",
    .json = JsonMode::kOptional,
    .min_operands = 1,
    .max_operands = 2,
    .operands = "one or two FILEs",
    .options = kOptions,
    .run = Record,
};

int RunProbe(std::vector<std::string> args, const Command& command = kTestCommand) {
  g_seen = Invocation{};
  args.insert(args.begin(), std::string(command.name));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return RunCommand(command, static_cast<int>(argv.size()), argv.data());
}

TEST(CliParser, OperandsFlagsAndValuesReachTheCommand) {
  ASSERT_EQ(RunProbe({"--force", "a.dump", "--output", "out", "b.dump", "--json"}), 7);
  EXPECT_EQ(g_seen.operands, (std::vector<std::string>{"a.dump", "b.dump"}));
  EXPECT_TRUE(g_seen.json);
  EXPECT_TRUE(g_seen.Flag("--force"));
  ASSERT_NE(g_seen.Value("--output"), nullptr);
  EXPECT_EQ(*g_seen.Value("--output"), "out");
  EXPECT_EQ(g_seen.command, &kTestCommand);

  ASSERT_EQ(RunProbe({"a.dump"}), 7);
  EXPECT_FALSE(g_seen.json);
  EXPECT_FALSE(g_seen.Flag("--force"));
  EXPECT_EQ(g_seen.Value("--output"), nullptr);
}

TEST(CliParser, DoubleDashEndsTheOptions) {
  ASSERT_EQ(RunProbe({"--", "--json", "-"}), 7);
  EXPECT_EQ(g_seen.operands, (std::vector<std::string>{"--json", "-"}));
  EXPECT_FALSE(g_seen.json);
}

TEST(CliParser, UsageErrorsNeverRunTheCommand) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunProbe({"--bogus", "a.dump"}), kExitUsage);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("jitdump: unknown option --bogus for probe\nusage: jitdump probe"), std::string::npos) << err;

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunProbe({}), kExitUsage);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("probe takes one or two FILEs"), std::string::npos) << err;

  EXPECT_EQ(RunProbe({"a", "b", "c"}), kExitUsage);
  EXPECT_EQ(RunProbe({"--json=1", "a"}), kExitUsage);   // flags take no value
  EXPECT_EQ(RunProbe({"--force=yes", "a"}), kExitUsage);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunProbe({"a", "--output"}), kExitUsage);  // a valued option without its value
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("DIR"), std::string::npos) << err;
  EXPECT_EQ(g_seen.command, nullptr);
}

TEST(CliParser, HelpWinsOverEverythingElse) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(RunProbe({"--bogus", "-h", "x", "y", "z"}), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), std::string(kTestCommand.usage));
  EXPECT_EQ(g_seen.command, nullptr);
}

TEST(CliParser, JsonModes) {
  Command text_only = kTestCommand;
  text_only.json = JsonMode::kNone;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunProbe({"--json", "a"}, text_only), kExitUsage);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("probe has no --json"), std::string::npos);
  Command json_only = kTestCommand;
  json_only.json = JsonMode::kRequired;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunProbe({"a"}, json_only), kExitUsage);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("probe needs --json"), std::string::npos);
  EXPECT_EQ(RunProbe({"a", "--json"}, json_only), 7);
}

TEST(CliParser, EveryRegisteredCommandIsComplete) {
  for (const Command* command : AllCommands()) {
    SCOPED_TRACE(std::string(command->name));
    EXPECT_FALSE(command->synopsis.empty());
    EXPECT_EQ(command->synopsis.substr(0, command->name.size()), command->name);
    EXPECT_FALSE(command->summary.empty());
    EXPECT_EQ(command->usage.substr(0, 15 + command->name.size()), "usage: jitdump " + std::string(command->name));
    EXPECT_NE(command->run, nullptr);
    EXPECT_LE(command->min_operands, command->max_operands);
    EXPECT_FALSE(command->operands.empty());
  }
}

}  // namespace
}  // namespace jitdump::tool
