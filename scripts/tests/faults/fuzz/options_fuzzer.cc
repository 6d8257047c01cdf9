// libFuzzer target: the option parser (agent/core/options.cc) and the option sources (agent/core/config.cc).
//
// Input layout: COMMAND_LINE \0 ENVIRONMENT \0 CONFIG_FILE. A missing part means that source is
// absent (no environment variable, no readable config file). The command line and the
// environment cannot contain NUL in real life; the config file can.
//
// Besides no crash / leak / UB, checks what the agent promises:
//  - whatever was accepted is inside the documented ranges;
//  - every error message is one printable line of bounded length (the user's bytes are escaped),
//    apart from a config path echoed raw (known bug "config-path-with-newline"; -DFUZZ_STRICT
//    checks that too);
//  - parsing is deterministic, and a config file becomes one option line.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "agent/core/config.h"
#include "agent/core/options.h"

using namespace jitdump_agent;

namespace {

const std::string* g_config_contents = nullptr;

std::string ReadConfig(const std::string& path, std::string* contents) {
  if (g_config_contents == nullptr || path.empty()) return "No such file or directory";
  *contents = *g_config_contents;
  return "";
}

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "options_fuzzer: %s: [%.*s]\n", what, static_cast<int>(std::min<size_t>(detail.size(), 400)),
               detail.data());
  std::abort();
}

bool Printable(std::string_view s) {
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

void CheckRanges(const Options& o) {
  if (o.budget_bytes < (64u << 10) || o.budget_bytes > (4ull << 30)) Fail("budget out of range", "");
  if (o.wait_ms > 10000) Fail("wait_ms out of range", "");
  if (o.flush_ms < 1 || o.flush_ms > 1000) Fail("flush_ms out of range", "");
  if (o.cache_entries > (1u << 20)) Fail("cache out of range", "");
  if (o.mode > 0777 || (o.mode & 0600) != 0600) Fail("mode out of range", "");
  for (const std::string* path : {&o.dir, &o.stats, &o.config}) {
    if (path->size() >= 4096 || path->find('\0') != std::string::npos) Fail("path accepted with NUL or too long", *path);
  }
  if (o.perfmap_dir.empty() || o.perfmap_dir.front() != '/') Fail("perfmap dir not absolute", o.perfmap_dir);
  if (static_cast<int>(o.log) < 0 || static_cast<int>(o.log) > 3) Fail("log level", "");
}

bool SameOptions(const Options& a, const Options& b) {
  return a.dir == b.dir && a.lines == b.lines && a.code == b.code && a.inline_info == b.inline_info &&
         a.names == b.names && a.budget_bytes == b.budget_bytes && a.overflow == b.overflow &&
         a.wait_ms == b.wait_ms && a.stats == b.stats && a.log == b.log && a.help == b.help &&
         a.strict == b.strict && a.backdate == b.backdate && a.perfmap == b.perfmap &&
         a.perfmap_dir == b.perfmap_dir && a.mode == b.mode && a.flush_ms == b.flush_ms &&
         a.cache_entries == b.cache_entries && a.config == b.config;
}

// The config path LoadOptions echoes (it looks at the environment, then the command line).
std::string ProbeConfig(std::string_view command_line, const char* env) {
  Options probe;
  if (env != nullptr) (void)ParseOptions(env, probe);
  (void)ParseOptions(command_line, probe);
  return probe.config;
}

void CheckMessages(const ParseResult& result, const std::string& config_path) {
  for (const OptionError& error : result.errors) {
    const std::string formatted = FormatOptionError(error);
    std::string_view message = formatted;
    if (message.empty()) Fail("empty message", error.key);
#ifndef FUZZ_STRICT
    // Known bug: the config path is printed raw. Look only at the rest of the message.
    const std::string prefix = "in " + config_path + ": ";
    if (!config_path.empty() && message.substr(0, prefix.size()) == prefix) message.remove_prefix(prefix.size());
    if (message == "cannot read config file '" + config_path + "'") continue;
    if (message.substr(0, 3) == "in " && !Printable(config_path)) continue;
#endif
    if (!Printable(message)) Fail("message is not one printable line", message);
    // Printable() cuts the user's text at 80 bytes (a config path at 100); keys list and accepted
    // values are fixed. Each cut byte may print as \xNN.
    if (message.size() > 1024) Fail("message too long", message);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t first = input.find('\0');
  const std::string_view command_line = input.substr(0, first);
  std::string env_storage;
  const char* env = nullptr;
  std::string config_contents;
  bool have_config = false;
  if (first != std::string_view::npos) {
    const std::string_view rest = input.substr(first + 1);
    const size_t second = rest.find('\0');
    env_storage = std::string(rest.substr(0, second));
    env = env_storage.c_str();
    if (second != std::string_view::npos) {
      config_contents = std::string(rest.substr(second + 1));
      have_config = true;
    }
  }

  // ParseOptions alone, twice: deterministic.
  Options a, b;
  const ParseResult ra = ParseOptions(command_line, a);
  const ParseResult rb = ParseOptions(command_line, b);
  if (ra.errors.size() != rb.errors.size() || !SameOptions(a, b)) Fail("ParseOptions not deterministic", command_line);
  CheckRanges(a);
  CheckMessages(ra, "");
  // An item without '=' or ',' can only be a flag or unknown: never more errors than items.
  size_t items = 1;
  for (char c : command_line) items += c == ',';
  if (ra.errors.size() > items) Fail("more errors than items", command_line);

  // All three sources.
  g_config_contents = have_config ? &config_contents : nullptr;
  Options merged;
  const ParseResult rm = LoadOptions(command_line, env, ReadConfig, merged);
  CheckRanges(merged);
  CheckMessages(rm, ProbeConfig(command_line, env));
  g_config_contents = nullptr;

  // A config file is one line of options whatever it holds (NUL included).
  if (have_config) {
    const std::string line = ConfigFileToOptions(config_contents);
    if (line.find('\n') != std::string::npos) Fail("config file line keeps a newline", line);
    Options c;
    (void)ParseOptions(line, c);
    CheckRanges(c);
  }

  // ExpandPid: only %p and %% change.
  const std::string expanded = ExpandPid(command_line, 4294967295u);
  if (expanded.size() > command_line.size() * 5 + 1) Fail("ExpandPid grew too much", command_line);
  if (command_line.find('%') == std::string_view::npos && expanded != command_line) Fail("ExpandPid changed text", "");
  return 0;
}
