// The option table and everything made from it: parsing, messages, help, the options table of docs/agent.md
// (options.h).
#include "agent/core/options.h"

#include <charconv>
#include <limits>

#include "jitdump/format/text.h"

namespace jitdump_agent {
namespace {

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

bool SetFlag(const OptionValue& v, bool& target) {
  const auto b = ParseBool(v.text);
  if (b) target = *b;
  return b.has_value();
}

bool SetPath(const OptionValue& v, std::string& target) {
  if (!IsPath(v.text)) return false;
  target = std::string(v.text);
  return true;
}

bool SetNumber(const OptionValue& v, uint64_t min, uint64_t max, uint32_t& target) {
  const auto n = ParseUnsigned(v.text, max);
  if (n && *n >= min) target = static_cast<uint32_t>(*n);
  return n && *n >= min;
}

// `choices` and `values` are parallel: the first choice equal to the text wins.
template <typename T, size_t N>
bool SetChoice(const OptionValue& v, const char* const (&choices)[N], const T (&values)[N], T& target) {
  for (size_t i = 0; i < N; ++i) {
    if (v.text == choices[i]) {
      target = values[i];
      return true;
    }
  }
  return false;
}

constexpr OptionSpec kOptions[] = {
    {"dir", "PATH", "`$JITDUMPDIR` or `$HOME` + `/.debug/jit/java-jit-YYYYMMDD.XXXXXX/` (perf's layout)",
     "where `jit-<pid>.dump` goes; created if missing; `%p` expands to the pid", "a directory path",
     [](const OptionValue& v, Options& o) { return SetPath(v, o.dir); }},
    {"lines", "on|off", "on", "`JIT_CODE_DEBUG_INFO` source lines", "on, off",
     [](const OptionValue& v, Options& o) { return SetFlag(v, o.lines); }},
    {"code", "on|off", "on", "code bytes (perf annotate needs them); off writes zeros", "on, off",
     [](const OptionValue& v, Options& o) { return SetFlag(v, o.code); }},
    {"inline", "on|off", "off",
     "samply's inline debug-info record before each load (inlined frames for samply and `jitdump addr2line`/`fold`); "
     "perf 6.1 warns once per record in `perf inject`: run `jitdump strip-inline DUMP` first, which moves them to "
     "`DUMP.inline`",
     "on, off", [](const OptionValue& v, Options& o) { return SetFlag(v, o.inline_info); }},
    {"names", "java|jvm|simple", "java",
     "`java.util.HashMap.getNode(int, java.lang.Object)` / perf's agent form "
     "`Ljava/util/HashMap;getNode(ILjava/lang/Object;)…` / `java.util.HashMap.getNode`",
     "java, jvm, simple",
     [](const OptionValue& v, Options& o) {
       static const char* const kChoices[] = {"java", "jvm", "simple"};
       static constexpr NameStyle kValues[] = {NameStyle::kJava, NameStyle::kJvm, NameStyle::kSimple};
       return SetChoice(v, kChoices, kValues, o.names);
     }},
    {"perfmap", "on|off|DIR", "off", "also keep `perf-<pid>.map` (in `/tmp` or DIR), compacted to the live code",
     "on, off, or an absolute directory path",
     [](const OptionValue& v, Options& o) {
       if (!v.present) {
         o.perfmap = true;
       } else if (const auto b = ParseBool(v.text)) {
         o.perfmap = *b;
       } else if (IsPath(v.text) && v.text.front() == '/') {
         o.perfmap = true;
         o.perfmap_dir = std::string(v.text);
       } else {
         return false;
       }
       return true;
     }},
    {"budget", "SIZE", "64M", "memory for finished records waiting for the writer (`K`, `M`, `G` suffixes; 256K to 4G)",
     "a size from 256K to 4G, e.g. 64M",
     [](const OptionValue& v, Options& o) {
       const auto size = ParseSize(v.text);
       // The minimum holds the largest single record with room to spare: HotSpot's Interpreter
       // blob, 97,828 bytes as a record on JDK 17 and 103,692 on JDK 25 (x86-64). A smaller
       // budget could never hold it, so it would always be lost.
       const bool ok = size && *size >= (256u << 10) && *size <= (4ull << 30);
       if (ok) o.budget_bytes = *size;
       return ok;
     }},
    {"overflow", "drop|wait", "drop",
     "when the budget is full: drop and count, or let the JVM thread wait up to `wait_ms` first", "drop, wait",
     [](const OptionValue& v, Options& o) {
       static const char* const kChoices[] = {"drop", "wait"};
       static constexpr Overflow kValues[] = {Overflow::kDrop, Overflow::kWait};
       return SetChoice(v, kChoices, kValues, o.overflow);
     }},
    {"wait_ms", "N", "100", "how long `overflow=wait` lets a JVM thread wait for room, in milliseconds (0 to 10000)",
     "milliseconds from 0 to 10000", [](const OptionValue& v, Options& o) { return SetNumber(v, 0, 10000, o.wait_ms); }},
    {"backdate", "on|off", "on",
     "move a load's timestamp back to when its address range was last freed, so samples taken before HotSpot "
     "posts the load resolve (see *Format decisions*)",
     "on, off", [](const OptionValue& v, Options& o) { return SetFlag(v, o.backdate); }},
    {"stats", "stderr|PATH", "–",
     "JSON statistics when the session ends (a stop, or the JVM's exit): why it ended, events, records, bytes, lost "
     "records by cause, each long-lived structure's high-water mark and bound, method-cache "
     "lookups, callback wall-time percentiles (all loads, and loads of ≤ 4 KiB of code), the thread CPU time of one "
     "load in 16, loads deferred to the writer, the writer's time per resolved load, its total CPU time and its "
     "sleeps, loads written unnamed (and how many after VM death), method-handle intrinsics named and unnamed",
     "stderr or a file path", [](const OptionValue& v, Options& o) { return SetPath(v, o.stats); }},
    {"log", "error|warn|info|debug", "warn", "the agent is silent in normal operation at `warn`",
     "error, warn, info, debug",
     [](const OptionValue& v, Options& o) {
       static const char* const kChoices[] = {"error", "warn", "info", "debug"};
       static constexpr LogLevel kValues[] = {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug};
       return SetChoice(v, kChoices, kValues, o.log);
     }},
    {"mode", "OCTAL", "0600", "permission bits of the files it creates (the owner keeps read and write)",
     "octal file mode with owner read/write, e.g. 0600 or 0644",
     [](const OptionValue& v, Options& o) {
       uint64_t bits = 0;
       bool valid = !v.text.empty() && v.text.size() <= 4;
       for (char c : v.text) {
         if (c < '0' || c > '7') valid = false; else bits = bits * 8 + static_cast<uint64_t>(c - '0');
       }
       valid = valid && bits <= 0777 && (bits & 0600) == 0600;
       if (valid) o.mode = static_cast<uint32_t>(bits);
       return valid;
     }},
    {"flush_ms", "N", "100",
     "writer poll interval, in milliseconds (1 to 1000): how long a record may wait to be written, unless 256 KiB "
     "pending wake the writer sooner; it doubles after each poll that found nothing, up to 8 times",
     "milliseconds from 1 to 1000",
     [](const OptionValue& v, Options& o) { return SetNumber(v, 1, 1000, o.flush_ms); }},
    {"cache", "N", "16384", "methods kept in the name/line cache (0 disables)",
     "a number of methods from 0 (off) to 1048576",
     [](const OptionValue& v, Options& o) { return SetNumber(v, 0, 1u << 20, o.cache_entries); }},
    {"resolve", "auto|writer|callback", "auto",
     "where names and lines of compiled methods are looked up: on the agent's writer thread (the JVM thread only "
     "copies the event) or inside the JVM's callback; `auto` picks the writer on JDK 17.0.14+, 21.0.3+ and 22+ "
     "(see *Where names are resolved*)",
     "auto, writer, callback",
     [](const OptionValue& v, Options& o) {
       static const char* const kChoices[] = {"auto", "writer", "callback"};
       static constexpr ResolveIn kValues[] = {ResolveIn::kAuto, ResolveIn::kWriter, ResolveIn::kCallback};
       return SetChoice(v, kChoices, kValues, o.resolve);
     }},
    {"intrinsics", "codelist|off", "codelist",
     "how method-handle intrinsics (`invokeBasic`, `linkTo*`: JVMTI gives all of them one method) are named: from "
     "the JVM's `Compiler.codelist`, read on the writer thread under HotSpot's code-cache lock within a CPU budget, "
     "or `off`: `MethodHandle.<intrinsic>(signature unknown)` (see *Method names*)",
     "codelist, off",
     [](const OptionValue& v, Options& o) {
       static const char* const kChoices[] = {"codelist", "off"};
       static constexpr bool kValues[] = {true, false};
       return SetChoice(v, kChoices, kValues, o.intrinsics_from_code_list);
     }},
    {"interp", "on|off", "off",
     "also write `jit-<pid>.dump.methods`, the method table that names HotSpot's interpreted frames in stacks "
     "perf copies (`perf-java --interp`, `perf record --call-graph dwarf`); JDK 17 to 25 on x86-64 (see *Interpreted "
     "frames*)",
     "on, off", [](const OptionValue& v, Options& o) { return SetFlag(v, o.interp); }},
    {"stop", "", "off",
     "stop the agent's active session: events off (HotSpot's own cost goes too), the dump closed with its CLOSE "
     "record, every descriptor closed, its thread gone, its stats written; a later load with options starts a new "
     "one (`jitdump-attach PID stop`, see *Sessions*)",
     "on, off",
     [](const OptionValue& v, Options& o) {
       if (v.present) return SetFlag(v, o.stop);
       o.stop = true;
       return true;
     }},
    {"stop_after", "SECONDS|off", "off",
     "the session stops itself this many seconds after it started, as `stop` would (the deadline a visit carries, "
     "so it ends even if whoever started it dies)",
     "a number of seconds from 1 to 31536000, or off",
     [](const OptionValue& v, Options& o) {
       if (const auto b = ParseBool(v.text); b && !*b) {
         o.stop_after_s = 0;
         return true;
       }
       const auto n = ParseUnsigned(v.text, 31536000);
       if (!n || *n == 0) return false;
       o.stop_after_s = static_cast<uint32_t>(*n);
       return true;
     }},
    {"max_size", "SIZE|off|auto", "auto",
     "the largest dump a session writes (`K`, `M`, `G` suffixes, at least 64K): past it, code is counted as lost "
     "(`lost.size_cap`) and not written, with one warning; `auto`: 1G for a session started by a late attach, no "
     "limit for one started with the JVM",
     "a size of at least 64K (e.g. 512M), off or auto",
     [](const OptionValue& v, Options& o) {
       if (v.text == "auto") {
         o.max_size.reset();
         return true;
       }
       if (const auto b = ParseBool(v.text); b && !*b) {
         o.max_size = 0;
         return true;
       }
       const auto size = ParseSize(v.text);
       if (!size || *size < (64u << 10)) return false;
       o.max_size = *size;
       return true;
     }},
    {"config", "FILE", "–", "read options from a file (one `key=value` per line, `#` comments)", "a file path",
     [](const OptionValue& v, Options& o) { return SetPath(v, o.config); }},
    {"strict", "", "off",
     "a bad option or an unusable output directory stops the JVM instead of disabling the agent", "on, off",
     [](const OptionValue& v, Options& o) {
       if (v.present) return SetFlag(v, o.strict);
       o.strict = true;
       return true;
     }},
    {"help", "", "", "print the options; the JVM runs on without the agent", "",
     [](const OptionValue&, Options& o) {
       o.help = true;
       return true;
     }},
};

const OptionSpec* FindOption(std::string_view key) {
  for (const OptionSpec& spec : kOptions) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

std::string KnownKeys() {
  std::string out;
  for (const OptionSpec& spec : kOptions) {
    if (!out.empty()) out += ", ";
    out += spec.key;
  }
  return out;
}

// "key=syntax", or the bare key.
std::string Usage(const OptionSpec& spec) {
  return spec.syntax.empty() ? std::string(spec.key) : std::string(spec.key) + "=" + std::string(spec.syntax);
}

// Markdown as a terminal shows it: without code and emphasis marks.
std::string Plain(std::string_view markdown) {
  std::string out;
  for (char c : markdown) {
    if (c != '`' && c != '*') out.push_back(c);
  }
  return out;
}

// Appends `text` wrapped at `width` columns, each line indented by `indent` spaces.
void AppendWrapped(std::string_view text, size_t indent, size_t width, std::string& out) {
  size_t column = 0;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (column > indent && column + 1 + word.size() > width) {
      out += '\n';
      column = 0;
    }
    if (column == 0) {
      out.append(indent, ' ');
      column = indent;
    } else {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  out += '\n';
}

bool HasDefault(const OptionSpec& spec) { return !spec.default_text.empty() && spec.default_text != "–"; }

}  // namespace

// Keeps messages printable whatever bytes the user passed (options may not be UTF-8).
std::string Printable(std::string_view s, size_t max) { return jitdump::EscapedText(s, false, max); }

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
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = jitdump::TrimSpace(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = jitdump::TrimSpace(item.substr(0, eq));
    const OptionValue value{eq != std::string_view::npos ? jitdump::TrimSpace(item.substr(eq + 1)) : std::string_view(),
                      eq != std::string_view::npos};
    const OptionSpec* spec = FindOption(key);
    if (spec == nullptr) {
      result.errors.push_back({std::string(key), "unknown option '" + Printable(key) + "'; known: " + KnownKeys()});
    } else if (!spec->apply(value, o)) {
      result.errors.push_back({std::string(key), "bad value '" + Printable(value.text) + "' for " + Printable(key) +
                                                     "; accepted: " + std::string(spec->accepted)});
    }
  }
  return result;
}

std::string FormatOptionError(const OptionError& error) { return error.message; }

const std::string& OptionsHelp() {
  static const std::string help = [] {
    std::string out =
        "libjitdumpagent: makes JIT-compiled Java visible to perf.\n"
        "Usage: java -agentpath:/path/libjitdumpagent.so[=key=value,...] ...\n"
        "  Options may also come from the JITDUMPAGENT_OPTIONS environment variable and from a file\n"
        "  named by config= (one key=value per line, # comments). Precedence, lowest first:\n"
        "  config file < JITDUMPAGENT_OPTIONS < the -agentpath / jcmd option string. The sections\n"
        "  named below are docs/agent.md's.\n\n";
    for (const OptionSpec& spec : kOptions) {
      out += "  " + Usage(spec);
      if (HasDefault(spec)) out += "  (default: " + Plain(spec.default_text) + ")";
      out += '\n';
      AppendWrapped(Plain(spec.meaning), 6, 96, out);
    }
    return out;
  }();
  return help;
}

std::span<const OptionSpec> OptionTable() { return kOptions; }

}  // namespace jitdump_agent
