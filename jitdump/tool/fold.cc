// Folding `perf script` text into stacks (fold.h): parsing samples and frame lines, finding
// the load of a JIT frame (also by sample time and in perf inject's jitted ELFs), expanding it
// into its inline chain.
#include "jitdump/tool/fold.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <unordered_map>
#include <vector>

namespace jitdump::tool {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "1234" or "1234/1235"
bool IsPidToken(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return AllDigits(s);
  return AllDigits(s.substr(0, slash)) && AllDigits(s.substr(slash + 1));
}

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) tokens.push_back(s.substr(start, i - start));
  }
  return tokens;
}

// A dso that may hold JIT code: none printed, unknown, perf map, jitted ELF, anonymous memory.
bool MaybeJitDso(std::string_view dso) {
  return dso.empty() || dso.find("unknown") != std::string_view::npos ||
         dso.find("jitted-") != std::string_view::npos || dso.find("perf-") != std::string_view::npos ||
         dso.find("anon") != std::string_view::npos || dso.find("memfd:") != std::string_view::npos;
}

// ';' separates frames in the folded format; keep it out of names.
std::string CleanName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

bool ParseHex(std::string_view s, uint64_t* value) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *value = v;
  return true;
}

bool ParseSampleTime(std::string_view token, uint64_t* ns) {
  if (token.empty() || token.back() != ':') return false;
  token.remove_suffix(1);
  const size_t dot = token.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= token.size()) return false;
  const std::string_view whole = token.substr(0, dot);
  std::string_view fraction = token.substr(dot + 1);
  if (!AllDigits(whole) || !AllDigits(fraction) || whole.size() > 10 || fraction.size() > 9) return false;
  uint64_t seconds = 0;
  for (char c : whole) seconds = seconds * 10 + static_cast<uint64_t>(c - '0');
  uint64_t nanos = 0;
  for (size_t i = 0; i < 9; ++i) nanos = nanos * 10 + (i < fraction.size() ? static_cast<uint64_t>(fraction[i] - '0') : 0);
  *ns = seconds * 1000000000ull + nanos;
  return true;
}

bool ParseFrameLine(std::string_view line, ScriptFrame* frame) {
  line = Trim(line);
  const size_t space = line.find_first_of(" \t");
  const std::string_view addr = line.substr(0, space);
  if (!ParseHex(addr, &frame->addr)) return false;
  std::string_view rest = space == std::string_view::npos ? std::string_view() : Trim(line.substr(space));
  frame->dso.clear();
  if (!rest.empty() && rest.back() == ')') {
    const size_t open = rest.rfind(" (");
    if (open != std::string_view::npos && open + 2 < rest.size() && (rest[open + 2] == '/' || rest[open + 2] == '[')) {
      frame->dso = std::string(rest.substr(open + 2, rest.size() - open - 3));
      rest = Trim(rest.substr(0, open));
    } else if (rest.front() == '(') {
      frame->dso = std::string(rest.substr(1, rest.size() - 2));
      rest = {};
    }
  }
  // "sym+0x1c" -> "sym"
  const size_t plus = rest.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0) {
    uint64_t ignored;
    if (ParseHex(rest.substr(plus + 1), &ignored)) rest = rest.substr(0, plus);
  }
  frame->sym = std::string(rest);
  return true;
}

namespace {

struct Sample {
  std::string comm;
  std::vector<ScriptFrame> frames;  // innermost first, as perf prints them
  bool active = false;
  bool frame_from_header = false;  // replaced by the callchain when indented frames follow
  std::optional<uint64_t> time_ns;  // when perf script printed the time field
};

// Loads covering an address, in file order, computed on first use.
using CoverCache = std::unordered_map<uint64_t, std::vector<size_t>>;

// After `perf inject --jit`, a JIT frame names its ELF, jitted-<pid>-<code_index>.so, and perf
// script prints the ip relative to that ELF: its .text starts at 0x80 (perf's
// GEN_ELF_TEXT_OFFSET), so code_addr + ip - 0x80 is the address. Returns the load's record
// index and rewrites *addr, or -1 when `dso` is no such ELF of this dump.
int64_t JittedElfLoad(const JitDump& dump, std::unordered_map<uint64_t, size_t>& by_index, std::string_view dso,
                      uint64_t* addr) {
  constexpr uint64_t kTextOffset = 0x80;
  const size_t slash = dso.rfind('/');
  std::string_view base = slash == std::string_view::npos ? dso : dso.substr(slash + 1);
  if (base.substr(0, 7) != "jitted-" || base.size() < 4 || base.substr(base.size() - 3) != ".so") return -1;
  base = base.substr(7, base.size() - 10);  // "<pid>-<index>"
  const size_t dash = base.find('-');
  if (dash == std::string_view::npos || !AllDigits(base.substr(dash + 1)) || base.size() - dash - 1 > 19) return -1;
  uint64_t code_index = 0;
  for (char c : base.substr(dash + 1)) code_index = code_index * 10 + static_cast<uint64_t>(c - '0');
  if (by_index.empty()) {
    for (size_t i = 0; i < dump.records.size(); ++i) {
      if (const LoadBody* load = dump.records[i].load()) by_index.emplace(load->code_index, i);
    }
  }
  const auto it = by_index.find(code_index);
  if (it == by_index.end()) return -1;
  const LoadBody* load = dump.records[it->second].load();
  if (*addr >= load->code_addr && *addr - load->code_addr < load->code_size) return static_cast<int64_t>(it->second);
  if (*addr < kTextOffset || *addr - kTextOffset >= load->code_size) return -1;
  *addr = load->code_addr + (*addr - kTextOffset);
  return static_cast<int64_t>(it->second);
}

// The load for a JIT frame: the final state of the address, unless the sample is older than that
// load; then the latest load covering the address that existed at the sample's time (code cache
// addresses are reused). Samples older than every covering load keep the final state.
int64_t LoadForFrame(const JitDump& dump, const CodeMap& map, CoverCache& cache, uint64_t addr,
                     std::optional<uint64_t> time_ns, FoldStats& stats) {
  const int64_t final_load = map.Find(addr);
  if (final_load < 0 || !time_ns || dump.records[static_cast<size_t>(final_load)].timestamp <= *time_ns) {
    return final_load;
  }
  auto [it, inserted] = cache.try_emplace(addr);
  if (inserted) {
    for (size_t i = 0; i < dump.records.size(); ++i) {
      const LoadBody* load = dump.records[i].load();
      if (load != nullptr && addr >= load->code_addr && addr - load->code_addr < load->code_size) it->second.push_back(i);
    }
  }
  for (size_t k = it->second.size(); k-- > 0;) {
    const size_t index = it->second[k];
    if (dump.records[index].timestamp <= *time_ns) {
      if (static_cast<int64_t>(index) != final_load) ++stats.time_resolved;
      return static_cast<int64_t>(index);
    }
  }
  return final_load;
}

void Flush(Sample& sample, const JitDump& dump, const CodeMap& map, const SidecarIndex& sidecar, CoverCache& cache,
           std::unordered_map<uint64_t, size_t>& by_index, std::map<std::string, uint64_t>& stacks, FoldStats& stats) {
  if (!sample.active || sample.frames.empty()) {
    sample = Sample{};
    return;
  }
  std::string stack = CleanName(sample.comm.empty() ? "[unknown]" : sample.comm);
  for (size_t i = sample.frames.size(); i-- > 0;) {
    const ScriptFrame& frame = sample.frames[i];
    uint64_t addr = frame.addr;
    int64_t load = JittedElfLoad(dump, by_index, frame.dso, &addr);
    if (load < 0 && MaybeJitDso(frame.dso)) load = LoadForFrame(dump, map, cache, addr, sample.time_ns, stats);
    if (load >= 0) {
      ++stats.jit_frames;
      const std::vector<InlineFrame> chain = InlineChain(dump, sidecar, static_cast<size_t>(load), addr);
      if (!chain.empty()) {
        ++stats.expanded_frames;
        for (size_t k = chain.size(); k-- > 0;) stack += ";" + CleanName(chain[k].function);
        continue;
      }
      if (frame.sym.empty() || frame.sym == "[unknown]") {
        stack += ";" + CleanName(dump.records[static_cast<size_t>(load)].load()->name);
        continue;
      }
    }
    stack += ";" + CleanName(frame.sym.empty() ? "[unknown]" : frame.sym);
  }
  ++stacks[stack];
  ++stats.samples;
  sample = Sample{};
}

}  // namespace

void FoldPerfScript(std::istream& in, const JitDump& dump, const CodeMap& map, const SidecarIndex& sidecar,
                    std::map<std::string, uint64_t>& stacks, FoldStats& stats) {
  Sample sample;
  CoverCache cache;
  std::unordered_map<uint64_t, size_t> by_index;
  std::string line;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) {
      Flush(sample, dump, map, sidecar, cache, by_index, stacks, stats);
      continue;
    }
    const bool indented = line[0] == ' ' || line[0] == '\t';
    ScriptFrame frame;
    if (indented && sample.active && ParseFrameLine(line, &frame)) {
      if (sample.frame_from_header) {
        sample.frames.clear();
        sample.frame_from_header = false;
      }
      sample.frames.push_back(std::move(frame));
      continue;
    }
    if (indented) continue;  // not a frame: ignore
    // A new sample header: "comm pid[/tid] [more fields]".
    Flush(sample, dump, map, sidecar, cache, by_index, stacks, stats);
    sample.active = true;
    const std::vector<std::string_view> tokens = Split(line);
    size_t pid_at = tokens.size();
    for (size_t i = 1; i < tokens.size(); ++i) {
      if (IsPidToken(tokens[i])) {
        pid_at = i;
        break;
      }
    }
    if (pid_at == tokens.size()) {
      sample.comm = tokens.empty() ? "" : std::string(tokens[0]);
      continue;
    }
    for (size_t i = pid_at + 1; i < tokens.size(); ++i) {
      uint64_t ns;
      if (ParseSampleTime(tokens[i], &ns)) {
        sample.time_ns = ns;
        break;
      }
    }
    const size_t comm_end = static_cast<size_t>(tokens[pid_at].data() - line.data());
    sample.comm = std::string(Trim(std::string_view(line).substr(0, comm_end)));
    // Single-line form: the token right after pid/tid is the ip.
    if (pid_at + 1 < tokens.size()) {
      const size_t tail_at = static_cast<size_t>(tokens[pid_at + 1].data() - line.data());
      uint64_t ignored;
      if (ParseHex(tokens[pid_at + 1], &ignored) && tokens[pid_at + 1].find(':') == std::string_view::npos) {
        ScriptFrame single;
        if (ParseFrameLine(std::string_view(line).substr(tail_at), &single)) {
          sample.frames.push_back(single);
          sample.frame_from_header = true;
        }
      }
    }
  }
  Flush(sample, dump, map, sidecar, cache, by_index, stacks, stats);
}

}  // namespace jitdump::tool
