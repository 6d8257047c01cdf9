#include "agent/core/options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/core/config.h"
#include "cpp-tests/temp_dir_test.h"

namespace jitdump_agent {
namespace {

TEST(OptionsTest, DefaultsAreProductionSafe) {
  Options o;
  EXPECT_TRUE(o.lines);
  EXPECT_TRUE(o.code);
  EXPECT_FALSE(o.inline_info);
  EXPECT_EQ(o.names, NameStyle::kJava);
  EXPECT_EQ(o.overflow, Overflow::kDrop);
  EXPECT_EQ(o.log, LogLevel::kWarn);
  EXPECT_FALSE(o.strict);
  EXPECT_EQ(o.mode, 0600u);
  EXPECT_EQ(o.resolve, ResolveIn::kAuto);
}

TEST(OptionsTest, ParsesEveryKey) {
  Options o;
  const ParseResult r = ParseOptions(
      "dir=/var/tmp/x,lines=off,code=off,inline=on,names=jvm,budget=8M,overflow=wait,wait_ms=5,stats=stderr,"
      "log=debug,perfmap=/srv/maps,mode=0644,backdate=off,flush_ms=3,cache=0,resolve=callback,strict",
      o);
  ASSERT_TRUE(r.ok()) << r.errors[0].message;
  EXPECT_EQ(o.dir, "/var/tmp/x");
  EXPECT_FALSE(o.lines);
  EXPECT_FALSE(o.code);
  EXPECT_TRUE(o.inline_info);
  EXPECT_EQ(o.names, NameStyle::kJvm);
  EXPECT_EQ(o.budget_bytes, 8u << 20);
  EXPECT_EQ(o.overflow, Overflow::kWait);
  EXPECT_EQ(o.wait_ms, 5u);
  EXPECT_EQ(o.stats, "stderr");
  EXPECT_EQ(o.log, LogLevel::kDebug);
  EXPECT_TRUE(o.perfmap);
  EXPECT_EQ(o.perfmap_dir, "/srv/maps");
  EXPECT_EQ(o.mode, 0644u);
  EXPECT_FALSE(o.backdate);
  EXPECT_EQ(o.flush_ms, 3u);
  EXPECT_EQ(o.cache_entries, 0u);
  EXPECT_EQ(o.resolve, ResolveIn::kCallback);
  EXPECT_TRUE(o.strict);
}

TEST(OptionsTest, LaterKeysWinAndBlanksAreIgnored) {
  Options o;
  ASSERT_TRUE(ParseOptions(" names=jvm , ,names=simple,", o).ok());
  EXPECT_EQ(o.names, NameStyle::kSimple);
}

TEST(OptionsTest, BadValueNamesKeyAndAcceptedValuesAndKeepsPrevious) {
  Options o;
  const ParseResult r = ParseOptions("names=bogus", o);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "names");
  EXPECT_NE(r.errors[0].message.find("java, jvm, simple"), std::string::npos);
  EXPECT_NE(r.errors[0].message.find("bogus"), std::string::npos);
  EXPECT_EQ(o.names, NameStyle::kJava);
}

TEST(OptionsTest, UnknownKeyIsAnError) {
  Options o;
  const ParseResult r = ParseOptions("colour=blue", o);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("unknown option 'colour'"), std::string::npos);
}

TEST(OptionsTest, OutOfRangeAndMalformedNumbers) {
  for (const char* text : {"budget=1K", "budget=5G", "budget=", "budget=12Q", "budget=-1", "wait_ms=10001",
                           "flush_ms=0", "cache=99999999", "mode=0400", "mode=999", "mode=", "lines=maybe",
                           "perfmap=relative/dir", "dir=", "overflow=block", "log=loud", "resolve=later"}) {
    Options o;
    const Options before;
    EXPECT_FALSE(ParseOptions(text, o).ok()) << text;
    EXPECT_EQ(o.budget_bytes, before.budget_bytes) << text;
  }
}

TEST(OptionsTest, NonUtf8AndHugeInputAreReportedPrintably) {
  Options o;
  std::string text = "names=\xff\xfe";
  text += ",";
  text += std::string(100000, 'k');
  const ParseResult r = ParseOptions(text, o);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].message.find("\\xff\\xfe"), std::string::npos);
  EXPECT_LT(r.errors[1].message.size(), 400u);  // a long key is cut in the message
}

TEST(OptionsTest, ParseSizeSuffixes) {
  EXPECT_EQ(ParseSize("512"), 512u);
  EXPECT_EQ(ParseSize("4k"), 4096u);
  EXPECT_EQ(ParseSize("2M"), 2u << 20);
  EXPECT_EQ(ParseSize("1G"), 1u << 30);
  EXPECT_FALSE(ParseSize("M").has_value());
  EXPECT_FALSE(ParseSize("99999999999999999999").has_value());
}

// docs/agent.md's options table: the option table rendered as Markdown.
std::string MarkdownTable() {
  const auto cell = [](std::string_view text) {  // '|' would end the cell
    std::string out;
    for (char c : text) {
      if (c == '|') out += '\\';
      out.push_back(c);
    }
    return out;
  };
  std::string out = "| option | default | meaning |\n|---|---|---|\n";
  for (const OptionSpec& spec : OptionTable()) {
    std::string usage(spec.key);
    if (!spec.syntax.empty()) usage += "=" + std::string(spec.syntax);
    out += "| `" + cell(usage) + "` | " + cell(spec.default_text) + " | " + cell(spec.meaning) + " |\n";
  }
  return out;
}

// docs/agent.md's options table is the option table rendered: the two cannot drift. (After a
// change to agent/core/options.cc, paste the table this prints into docs/agent.md.)
TEST(OptionsTableTest, ReadmeTableIsTheOptionTable) {
  std::ifstream in(JITDUMPAGENT_OPTIONS_DOC);
  ASSERT_TRUE(in) << "cannot read " << JITDUMPAGENT_OPTIONS_DOC;
  std::string line, table;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "| option | default | meaning |") inside = true;
    if (inside && line.empty()) break;
    if (inside) table += line + "\n";
  }
  EXPECT_EQ(table, MarkdownTable()) << "docs/agent.md's options table differs from agent/core/options.cc's; "
                                       "the table should read:\n" << MarkdownTable();
}

// Every default the table documents, parsed as a value of its key, is the default Options has.
// Four defaults are not values but "none" (–, nothing) or a description of perf's layout.
TEST(OptionsTableTest, DocumentedDefaultsAreTheDefaults) {
  const std::vector<std::string_view> described = {"dir", "stats", "config", "help"};
  size_t checked = 0;
  for (const OptionSpec& spec : OptionTable()) {
    if (std::find(described.begin(), described.end(), spec.key) != described.end()) continue;
    Options o;
    const std::string option = std::string(spec.key) + "=" + std::string(spec.default_text);
    ASSERT_TRUE(ParseOptions(option, o).ok()) << option;
    EXPECT_EQ(o, Options()) << option << " is documented as the default but is not";
    ++checked;
  }
  EXPECT_EQ(checked + described.size(), OptionTable().size());
  const Options defaults;
  EXPECT_TRUE(defaults.dir.empty() && defaults.stats.empty() && defaults.config.empty() && !defaults.help);
}

TEST(OptionsTableTest, HelpAndTheUnknownKeyMessageNameEveryKey) {
  Options o;
  const ParseResult r = ParseOptions("colour=blue", o);
  ASSERT_EQ(r.errors.size(), 1u);
  for (const OptionSpec& spec : OptionTable()) {
    const std::string key(spec.key);
    EXPECT_NE(OptionsHelp().find("\n  " + key), std::string::npos) << key;
    EXPECT_NE(r.errors[0].message.find(key), std::string::npos) << key;
  }
  EXPECT_NE(r.errors[0].message.find("known: dir, lines, code"), std::string::npos) << r.errors[0].message;
  EXPECT_NE(OptionsHelp().find("Usage: java -agentpath:"), std::string::npos);
  EXPECT_NE(OptionsHelp().find("names=java|jvm|simple  (default: java)"), std::string::npos) << OptionsHelp();
}

std::string ReadFixture(const std::string& path, std::string* contents) {
  if (path != "/etc/jitdump.conf") return "No such file or directory";
  *contents = "# from the ConfigMap\nnames=simple\nlines=off  \n\nlog=info\n";
  return "";
}

TEST(ConfigTest, PrecedenceFileThenEnvironmentThenCommandLine) {
  Options o;
  const ParseResult r = LoadOptions("config=/etc/jitdump.conf,log=debug", "lines=on,names=jvm", ReadFixture, o);
  ASSERT_TRUE(r.ok()) << r.errors[0].message;
  EXPECT_EQ(o.names, NameStyle::kJvm);    // environment beats the file
  EXPECT_TRUE(o.lines);                   // environment beats the file
  EXPECT_EQ(o.log, LogLevel::kDebug);     // command line beats the file
}

TEST(ConfigTest, ConfigNamedInEnvironmentIsRead) {
  Options o;
  ASSERT_TRUE(LoadOptions("", "config=/etc/jitdump.conf", ReadFixture, o).ok());
  EXPECT_EQ(o.names, NameStyle::kSimple);
}

TEST(ConfigTest, UnreadableConfigAndBadEnvironmentAreNamed) {
  Options o;
  const ParseResult r = LoadOptions("config=/missing", "names=x", ReadFixture, o);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_NE(r.errors[0].message.find("/missing"), std::string::npos);
  EXPECT_NE(r.errors[1].message.find("JITDUMPAGENT_OPTIONS"), std::string::npos);
}

TEST(ConfigTest, ExpandPid) {
  EXPECT_EQ(ExpandPid("/tmp/jit-%p/x%%p", 42), "/tmp/jit-42/x%p");
  EXPECT_EQ(ExpandPid("plain", 7), "plain");
  EXPECT_EQ(ExpandPid("trailing%", 7), "trailing%");
}

// --- config files (issue #13 item 10) ---

class ConfigFileTest : public TempDirTest {};

TEST_F(ConfigFileTest, ReadsARegularFileUpToTheLimit) {
  std::string contents;
  EXPECT_EQ(ReadConfigFile(Write("ok.conf", "names=simple\n"), &contents), "");
  EXPECT_EQ(contents, "names=simple\n");
  const std::string exact(kMaxConfigFileBytes, '#');
  EXPECT_EQ(ReadConfigFile(Write("exact.conf", exact), &contents), "");
  EXPECT_EQ(contents.size(), kMaxConfigFileBytes);
}

TEST_F(ConfigFileTest, RefusesAFileOverTheLimitNamingIt) {
  std::string contents = "left over";
  const std::string problem = ReadConfigFile(Write("big.conf", std::string(kMaxConfigFileBytes + 1, '#')), &contents);
  EXPECT_NE(problem.find("over the limit of 1048576 bytes (1 MiB)"), std::string::npos) << problem;
  EXPECT_TRUE(contents.empty());
}

TEST_F(ConfigFileTest, RefusesWhatIsNotARegularFileWithoutReadingOrBlocking) {
  std::string contents;
  EXPECT_EQ(ReadConfigFile(dir_, &contents), "not a regular file");
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ReadConfigFile(fifo, &contents), "not a regular file");  // returns at once: O_NONBLOCK
  EXPECT_EQ(ReadConfigFile("/dev/null", &contents), "not a regular file");
  // /proc files claim to be regular files of size 0; some have side effects when read.
  EXPECT_NE(ReadConfigFile("/proc/self/mem", &contents).find("/proc or /sys"), std::string::npos);
  EXPECT_NE(ReadConfigFile("/proc/self/status", &contents).find("/proc or /sys"), std::string::npos);
  EXPECT_NE(ReadConfigFile(dir_ + "/missing", &contents).find("No such file"), std::string::npos);
}

std::string ReadManyBadLines(const std::string&, std::string* contents) {
  for (int i = 0; i < 50; ++i) *contents += "bogus" + std::to_string(i) + "=1\n";
  return "";
}

TEST(ConfigTest, RepeatedErrorsInAFileAreCapped) {
  Options o;
  const ParseResult r = LoadOptions("config=/etc/noise.conf", nullptr, ReadManyBadLines, o);
  ASSERT_EQ(r.errors.size(), kMaxConfigFileErrors + 1);
  EXPECT_NE(r.errors[0].message.find("bogus0"), std::string::npos);
  EXPECT_NE(r.errors.back().message.find("40 more errors not shown"), std::string::npos) << r.errors.back().message;
  EXPECT_NE(r.errors.back().message.find("/etc/noise.conf"), std::string::npos);
}

TEST(ConfigTest, AnUnreadableConfigSaysWhy) {
  Options o;
  const ParseResult r = LoadOptions("config=/proc/self/mem", nullptr, ReadConfigFile, o);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("'/proc/self/mem': a /proc or /sys file"), std::string::npos)
      << r.errors[0].message;
}

}  // namespace
}  // namespace jitdump_agent
