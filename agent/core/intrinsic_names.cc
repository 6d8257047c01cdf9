// Method-handle intrinsics named from the JVM's code list (intrinsic_names.h).
#include "agent/core/intrinsic_names.h"

#include "agent/core/log.h"
#include "agent/core/names.h"

namespace jitdump_agent {
namespace {

constexpr std::string_view kExternalClass = "java.lang.invoke.MethodHandle.";

// The next space-separated field of `line` from `pos`, advancing `pos` past it.
std::string_view NextField(std::string_view line, size_t& pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const size_t start = pos;
  while (pos < line.size() && line[pos] != ' ') ++pos;
  return line.substr(start, pos - start);
}

bool ParseHex(std::string_view text, uint64_t* value) {
  if (text.substr(0, 2) != "0x" || text.size() <= 2 || text.size() > 18) return false;
  uint64_t v = 0;
  for (char c : text.substr(2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return false;
    v = v << 4 | static_cast<uint64_t>(digit);
  }
  *value = v;
  return true;
}

}  // namespace

IntrinsicName UnknownIntrinsicName(NameStyle style) {
  IntrinsicName out;
  switch (style) {
    case NameStyle::kJvm:
      out.name = "Ljava/lang/invoke/MethodHandle;<intrinsic>(signature unknown)";
      out.perf_map_spelling = "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)";
      break;
    case NameStyle::kSimple:
      out.name = "java.lang.invoke.MethodHandle.<intrinsic>";
      break;
    case NameStyle::kJava:
      out.name = "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)";
      break;
  }
  return out;
}

std::unordered_map<uint64_t, IntrinsicName> ParseIntrinsics(std::string_view code_list, NameStyle style) {
  std::unordered_map<uint64_t, IntrinsicName> out;
  while (!code_list.empty()) {
    const size_t eol = code_list.find('\n');
    const std::string_view line = code_list.substr(0, eol);
    code_list = eol == std::string_view::npos ? std::string_view() : code_list.substr(eol + 1);
    size_t pos = 0;
    NextField(line, pos);                                 // compile id
    if (NextField(line, pos) != "0") continue;            // level: 0 is a native wrapper
    NextField(line, pos);                                 // state
    const std::string_view method = NextField(line, pos);  // class.name(descriptor)
    if (method.substr(0, kExternalClass.size()) != kExternalClass) continue;
    const size_t paren = method.find('(');
    if (paren == std::string_view::npos) continue;
    // " [0xHEADER, 0xCODE_BEGIN - 0xCODE_END]"
    const std::string_view header = NextField(line, pos);
    const std::string_view code_begin = NextField(line, pos);
    uint64_t addr = 0;
    if (header.substr(0, 1) != "[" || code_begin.empty() || !ParseHex(code_begin, &addr)) continue;
    const std::string_view name = method.substr(kExternalClass.size(), paren - kExternalClass.size());
    const std::string_view descriptor = method.substr(paren);
    IntrinsicName& entry = out[addr];
    entry.name = FormatMethodName(style, kMethodHandleClass, name, descriptor);
    entry.perf_map_spelling = PerfMapMethodName(style, kMethodHandleClass, name, descriptor);
  }
  return out;
}

IntrinsicNamer::IntrinsicNamer(CodeListSource& source, NameStyle style, Stats& stats, Clock clock, Clock cpu_clock)
    : source_(source),
      style_(style),
      stats_(stats),
      clock_(clock),
      cpu_clock_(cpu_clock),
      unknown_(UnknownIntrinsicName(style)) {}

bool IntrinsicNamer::Refresh(bool force) {
  if (unavailable_) return false;
  const uint64_t start = clock_();
  // A read costs in proportion to the nmethods in the code cache (about the loads seen less the
  // unloads): expect the last read's cost scaled by how much that grew, and read only if that
  // still fits, so a read late in a long run cannot overshoot the budget by much.
  const uint64_t loads = stats_.compiled_method_load.Get(), unloads = stats_.compiled_method_unload.Get();
  const uint64_t nmethods = loads > unloads ? loads - unloads : 1;
  const uint64_t expected = last_read_ns_ * nmethods / last_read_nmethods_;
  const bool affordable = force ? expected <= kForcedReadMaxNs
                                 : spent_ns_ + expected <= kBudgetBaseNs + (start - first_read_) / kBudgetShare;
  if (first_read_ != 0 && !affordable) {
    if (force) stats_.intrinsic_lists_skipped.Add();  // otherwise put off: the load waits
    return false;
  }
  if (first_read_ == 0) first_read_ = start;
  std::string text;
  // Costed in this thread's CPU time: the JVM formats the list on the calling thread, and wall
  // time on a loaded machine would charge the reads for being preempted (measured: a start-up
  // burst of MhIntrinsics left unnamed at load 8 with a wall-time budget).
  const uint64_t cpu_start = cpu_clock_();
  const bool read = source_.Read(&text);
  const uint64_t cost = cpu_clock_() - cpu_start;
  spent_ns_ += cost;
  last_read_ns_ = cost;
  last_read_nmethods_ = nmethods;
  if (!read) {
    unavailable_ = true;
    return false;
  }
  stats_.intrinsic_lists_read.Add();
  stats_.intrinsic_list_ns.Add(cost);
  table_ = ParseIntrinsics(text, style_);
  table_time_ = start;
  Log(LogLevel::kDebug, "read Compiler.codelist: %zu bytes, %zu intrinsics, %.1f ms of CPU (%llu nmethods expected)",
      text.size(), table_.size(), static_cast<double>(cost) / 1e6, static_cast<unsigned long long>(nmethods));
  return true;
}

const IntrinsicName* IntrinsicNamer::Name(uint64_t code_addr, uint64_t posted, bool force) {
  // A list read after the load was posted holds its nmethod (it was installed before HotSpot
  // posted the load) unless it is gone again. An older list may hold another nmethod at a
  // reused address: read anew (one read then serves every load posted before it).
  const bool stale = table_time_ == 0 || table_time_ < posted;
  if (stale && !Refresh(force) && !force && !unavailable_) return nullptr;  // put off: ask again later
  if (table_time_ != 0 && table_time_ >= posted) {
    auto it = table_.find(code_addr);
    if (it != table_.end()) {
      stats_.intrinsics_named.Add();
      return &it->second;
    }
  }
  stats_.intrinsics_unnamed.Add();
  return &unknown_;
}

}  // namespace jitdump_agent
