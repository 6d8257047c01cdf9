// Agent options: "key=value,key=value" after the '=' of -agentpath, or from the environment
// variable JITDUMPAGENT_OPTIONS, or from a file named by config=. One table (options.cc) says
// for every key its syntax, default, meaning and accepted values; parsing, the "known:" list of
// an unknown key, `help` and the options table of docs/agent.md all come from it. Pure, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump_agent {

enum class NameStyle {
  kJava,    // java.util.HashMap.getNode(int, java.lang.Object)   (default)
  kJvm,     // Ljava/util/HashMap;getNode(ILjava/lang/Object;)Ljava/util/HashMap$Node;  (perf's agent)
  kSimple,  // java.util.HashMap.getNode
};

enum class Overflow {
  kDrop,  // a record that does not fit the budget is dropped and counted (default)
  kWait,  // the producing JVM thread waits up to wait_ms for room, then drops and counts
};

// Where names and lines of compiled methods are looked up (see jvm_version.h).
enum class ResolveIn {
  kAuto,      // on the writer thread where the JVM allows it, else in the callback (default)
  kWriter,    // on the writer thread whatever the JVM version (still never before VMInit)
  kCallback,  // inside the CompiledMethodLoad callback, on the JVM's thread
};

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// max_size=auto for a session started by a late attach: visits are meant to be short, and under
// class churn a dump grows ~2 MB/s (docs/measurements.md), so a forgotten one stops at 1 GiB.
inline constexpr uint64_t kAttachedMaxSize = 1ull << 30;
// max_size= as it applies to a session (0: no limit).
inline uint64_t EffectiveMaxSize(const std::optional<uint64_t>& max_size, bool attached) {
  return max_size ? *max_size : attached ? kAttachedMaxSize : 0;
}

struct Options {
  std::string dir;               // output directory; empty: perf's default layout
  bool lines = true;             // JIT_CODE_DEBUG_INFO
  bool code = true;              // code bytes (zeros when off)
  bool inline_info = false;      // samply inline debug-info record
  NameStyle names = NameStyle::kJava;
  uint64_t budget_bytes = 64ull << 20;  // bytes of finished records waiting for the writer
  Overflow overflow = Overflow::kDrop;
  uint32_t wait_ms = 100;
  std::string stats;             // "", "stderr" or a file path
  LogLevel log = LogLevel::kWarn;
  bool help = false;
  bool strict = false;           // bad options stop the JVM instead of disabling the agent
  bool backdate = true;          // move a load's timestamp back to when its range became free
  bool perfmap = false;          // perf-<pid>.map
  std::string perfmap_dir = "/tmp";
  uint32_t mode = 0600;          // permission bits of the files we create
  uint32_t flush_ms = 100;       // writer poll interval: how long a record may wait to be written
  uint32_t cache_entries = 16384;  // per-method lookup cache bound
  ResolveIn resolve = ResolveIn::kAuto;
  bool intrinsics_from_code_list = true;  // intrinsics=codelist (intrinsic_names.h)
  bool interp = false;           // the method table that names interpreted frames (method_table_writer.h)
  std::string config;            // file the options were also read from
  // The session's life (a visit): stop the active session now (a load of the agent with
  // `stop`), or let it stop itself after this many seconds (0: never).
  bool stop = false;
  uint32_t stop_after_s = 0;
  // The largest dump a session writes (0: no limit); unset: kAttachedMaxSize for a session
  // started by a late attach, no limit for one started with the JVM.
  std::optional<uint64_t> max_size;

  bool operator==(const Options&) const = default;
};

struct OptionError {
  std::string key;
  std::string message;  // names the accepted values
};

struct ParseResult {
  std::vector<OptionError> errors;
  bool ok() const { return errors.empty(); }
};

// Applies `text` on top of `options`. Later keys override earlier ones; every key that is
// unknown or has a bad value produces one error naming the accepted values, and leaves the
// option at its previous value.
ParseResult ParseOptions(std::string_view text, Options& options);

// The text printed for `help`.
const std::string& OptionsHelp();

// One option's value as written: `present` is false for a bare key ("strict").
struct OptionValue {
  std::string_view text;
  bool present = false;
};

// Everything about one key. `syntax` follows "key=" (empty for a bare flag); `default_text`
// and `meaning` are Markdown (docs/agent.md's columns; `help` prints them without the markup);
// `accepted` ends the error for a bad value; `apply` returns false for a bad value and then
// leaves the options as they were.
struct OptionSpec {
  std::string_view key;
  std::string_view syntax;
  std::string_view default_text;
  std::string_view meaning;
  std::string_view accepted;
  bool (*apply)(const OptionValue& value, Options& o);
};

// Every key, in the order help and docs/agent.md list them.
std::span<const OptionSpec> OptionTable();

// Size with an optional K/M/G suffix (binary units).
std::optional<uint64_t> ParseSize(std::string_view text);

// `text` made safe for a one-line message: non-printable bytes as \xNN, cut after `max` bytes.
std::string Printable(std::string_view text, size_t max = 80);
// A path (or any name) for a message: Printable, long enough for any real path. Every path and
// name a message shows goes through one of the two: a control byte (a terminal escape, a line
// feed forging a second log line) or a byte that is not ASCII never reaches the terminal raw.
inline std::string PrintablePath(std::string_view path) { return Printable(path, 1024); }

// Renders one error as a single line for stderr.
std::string FormatOptionError(const OptionError& error);

}  // namespace jitdump_agent
