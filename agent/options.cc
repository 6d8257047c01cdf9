#include "agent/options.h"

#include <charconv>
#include <limits>

namespace jitdump_agent {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<bool> ParseBool(std::string_view v) {
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  return std::nullopt;
}

std::optional<uint64_t> ParseUnsigned(std::string_view v, uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || value > max) return std::nullopt;
  return value;
}

bool IsPath(std::string_view v) { return !v.empty() && v.size() < 4096 && v.find('\0') == std::string_view::npos; }

}  // namespace

// Keeps messages printable whatever bytes the user passed (options may not be UTF-8).
std::string Printable(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

std::optional<uint64_t> ParseSize(std::string_view text) {
  uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': multiplier = 1ull << 10; break;
      case 'm': case 'M': multiplier = 1ull << 20; break;
      case 'g': case 'G': multiplier = 1ull << 30; break;
      default: break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  const auto value = ParseUnsigned(text, std::numeric_limits<uint64_t>::max() / multiplier);
  if (!value) return std::nullopt;
  return *value * multiplier;
}

ParseResult ParseOptions(std::string_view text, Options& o) {
  ParseResult result;
  auto bad = [&](std::string_view key, std::string_view value, const char* accepted) {
    result.errors.push_back({std::string(key), "bad value '" + Printable(value) + "' for " + Printable(key) +
                                                   "; accepted: " + accepted});
  };
  auto flag = [&](std::string_view key, std::string_view value, bool& target) {
    if (const auto b = ParseBool(value)) target = *b; else bad(key, value, "on, off");
  };
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = Trim(item.substr(0, eq));
    const bool has_value = eq != std::string_view::npos;
    const std::string_view value = has_value ? Trim(item.substr(eq + 1)) : std::string_view();

    if (key == "help") {
      o.help = true;
    } else if (key == "strict") {
      if (has_value) flag(key, value, o.strict); else o.strict = true;
    } else if (key == "dir") {
      if (IsPath(value)) o.dir = std::string(value); else bad(key, value, "a directory path");
    } else if (key == "lines") {
      flag(key, value, o.lines);
    } else if (key == "code") {
      flag(key, value, o.code);
    } else if (key == "inline") {
      flag(key, value, o.inline_info);
    } else if (key == "backdate") {
      flag(key, value, o.backdate);
    } else if (key == "names") {
      if (value == "java") o.names = NameStyle::kJava;
      else if (value == "jvm") o.names = NameStyle::kJvm;
      else if (value == "simple") o.names = NameStyle::kSimple;
      else bad(key, value, "java, jvm, simple");
    } else if (key == "budget") {
      const auto size = ParseSize(value);
      if (size && *size >= (64u << 10) && *size <= (4ull << 30)) o.budget_bytes = *size;
      else bad(key, value, "a size from 64K to 4G, e.g. 64M");
    } else if (key == "overflow") {
      if (value == "drop") o.overflow = Overflow::kDrop;
      else if (value == "wait") o.overflow = Overflow::kWait;
      else bad(key, value, "drop, wait");
    } else if (key == "wait_ms") {
      if (const auto v = ParseUnsigned(value, 10000)) o.wait_ms = static_cast<uint32_t>(*v);
      else bad(key, value, "milliseconds from 0 to 10000");
    } else if (key == "stats") {
      if (IsPath(value)) o.stats = std::string(value); else bad(key, value, "stderr or a file path");
    } else if (key == "log") {
      if (value == "error") o.log = LogLevel::kError;
      else if (value == "warn") o.log = LogLevel::kWarn;
      else if (value == "info") o.log = LogLevel::kInfo;
      else if (value == "debug") o.log = LogLevel::kDebug;
      else bad(key, value, "error, warn, info, debug");
    } else if (key == "perfmap") {
      if (!has_value) {
        o.perfmap = true;
      } else if (const auto b = ParseBool(value)) {
        o.perfmap = *b;
      } else if (IsPath(value) && value.front() == '/') {
        o.perfmap = true;
        o.perfmap_dir = std::string(value);
      } else {
        bad(key, value, "on, off, or an absolute directory path");
      }
    } else if (key == "mode") {
      // Octal permission bits; the owner must keep read and write.
      uint64_t bits = 0;
      bool valid = !value.empty() && value.size() <= 4;
      for (char c : value) {
        if (c < '0' || c > '7') valid = false; else bits = bits * 8 + static_cast<uint64_t>(c - '0');
      }
      if (valid && bits <= 0777 && (bits & 0600) == 0600) o.mode = static_cast<uint32_t>(bits);
      else bad(key, value, "octal file mode with owner read/write, e.g. 0600 or 0644");
    } else if (key == "flush_ms") {
      const auto v = ParseUnsigned(value, 1000);
      if (v && *v >= 1) o.flush_ms = static_cast<uint32_t>(*v); else bad(key, value, "milliseconds from 1 to 1000");
    } else if (key == "cache") {
      if (const auto v = ParseUnsigned(value, 1u << 20)) o.cache_entries = static_cast<uint32_t>(*v);
      else bad(key, value, "a number of methods from 0 (off) to 1048576");
    } else if (key == "resolve") {
      if (value == "auto") o.resolve = ResolveIn::kAuto;
      else if (value == "writer") o.resolve = ResolveIn::kWriter;
      else if (value == "callback") o.resolve = ResolveIn::kCallback;
      else bad(key, value, "auto, writer, callback");
    } else if (key == "config") {
      if (IsPath(value)) o.config = std::string(value); else bad(key, value, "a file path");
    } else {
      result.errors.push_back({std::string(key), "unknown option '" + Printable(key) +
                                                     "'; known: dir, lines, code, inline, names, budget, overflow, "
                                                     "wait_ms, stats, log, perfmap, mode, backdate, flush_ms, cache, "
                                                     "resolve, config, strict, help"});
    }
  }
  return result;
}

std::string FormatOptionError(const OptionError& error) { return error.message; }

const char* OptionsHelp() {
  return R"(libjitdumpagent: makes JIT-compiled Java visible to perf.
Usage: java -agentpath:/path/libjitdumpagent.so[=key=value,...] ...
  Options may also come from the JITDUMPAGENT_OPTIONS environment variable and from a file
  named by config= (one key=value per line, # comments). Precedence, lowest first:
  config file < JITDUMPAGENT_OPTIONS < the -agentpath / jcmd option string.

  dir=PATH        directory for jit-<pid>.dump (created if missing). Default:
                  $JITDUMPDIR/.debug/jit/java-jit-YYYYMMDD.XXXXXX, else $HOME/.debug/jit/...
  lines=on|off    source lines (JIT_CODE_DEBUG_INFO) for compiled methods (on)
  code=on|off     code bytes in each load, needed by perf annotate (on; off writes zeros)
  inline=on|off   samply inline debug-info records (off). perf 6.1 prints one warning per
                  record during perf inject: run `jitdump strip-inline DUMP` first, which
                  moves them into DUMP.inline where `jitdump addr2line` and `fold` find them
  names=java|jvm|simple
                  java:   java.util.HashMap.getNode(int, java.lang.Object)   (default)
                  jvm:    Ljava/util/HashMap;getNode(ILjava/lang/Object;)...  (perf's own agent)
                  simple: java.util.HashMap.getNode
  perfmap=on|off|DIR
                  also keep perf-<pid>.map in /tmp (or DIR), compacted to the live code
  budget=SIZE     memory for records waiting to be written (64M); K, M, G suffixes
  overflow=drop|wait
                  when the budget is full: drop the record and count it (drop), or let the
                  JVM thread wait up to wait_ms for room first (wait)
  wait_ms=N       (100)
  backdate=on|off move a load's timestamp back to when its address range was last freed,
                  so samples taken before HotSpot posts the event resolve (on)
  stats=stderr|PATH
                  print statistics as JSON at exit (events, bytes, lost, queue, latency)
  log=error|warn|info|debug   (warn)
  mode=OCTAL      permission bits of created files (0600)
  flush_ms=N      writer poll interval in milliseconds (10)
  cache=N         methods kept in the name/line cache (16384; 0 disables)
  resolve=auto|writer|callback
                  where method names and lines are looked up: on the agent's writer thread,
                  so the JVM thread only copies the event, or inside the JVM's callback.
                  auto: writer on JDK 17.0.14+, 21.0.3+ and 22+ (JVMs that answer stale
                  method ids safely), callback on others
  strict          a bad option stops the JVM instead of disabling the agent
  help            print this text; the JVM runs on without the agent
)";
}

}  // namespace jitdump_agent
