#include "jitdump/report/perf_script.h"

#include <algorithm>
#include "jitdump/format/text.h"

namespace jitdump::report {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseDecimal(std::string_view s, int64_t* value) {
  bool negative = false;
  if (!s.empty() && s[0] == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  if (!AllDigits(s) || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  *value = negative ? -v : v;
  return true;
}

// A period: perf prints it as an unsigned decimal.
bool ParseU64(std::string_view s, uint64_t* value) {
  if (!AllDigits(s) || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  *value = v;
  return true;
}

bool ParseU32(std::string_view s, uint32_t* value) {
  int64_t v;
  if (!ParseDecimal(s, &v) || v < 0 || v > UINT32_MAX) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

// "1234" or "1234/1235" (perf prints pid/tid, or one of them).
bool ParsePidToken(std::string_view s, uint32_t* pid, uint32_t* tid) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) {
    if (!ParseU32(s, pid)) return false;
    *tid = *pid;
    return true;
  }
  return ParseU32(s.substr(0, slash), pid) && ParseU32(s.substr(slash + 1), tid);
}

// "[001]": the cpu field.
bool IsCpuToken(std::string_view s) {
  return s.size() >= 3 && s.front() == '[' && s.back() == ']' && AllDigits(s.substr(1, s.size() - 2));
}

struct Token {
  std::string_view text;
  size_t at;  // offset in the line
};

void Tokenize(std::string_view line, std::vector<Token>& tokens) {
  tokens.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), start});
  }
}

// Where the pid token and the time token of a header (or an event's prefix) are. With
// `need_time`, only "PID[/TID] [[CPU]] TIME:" counts, so a thread named "worker 7" is not
// taken for pid 7; without it the first pid-like token after the comm does.
struct HeaderShape {
  size_t pid = 0;    // token index
  size_t next = 0;   // first token after the pid (and the time, when present)
  std::optional<uint64_t> time_ns;
};

bool FindHeaderShape(const std::vector<Token>& tokens, bool need_time, HeaderShape* shape) {
  uint32_t pid, tid;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!ParsePidToken(tokens[i].text, &pid, &tid)) continue;
    size_t j = i + 1;
    if (j < tokens.size() && IsCpuToken(tokens[j].text)) ++j;
    uint64_t ns;
    if (j < tokens.size() && ParseSampleTime(tokens[j].text, &ns)) {
      *shape = HeaderShape{i, j + 1, ns};
      return true;
    }
  }
  if (need_time) return false;
  for (size_t i = 1; i < tokens.size(); ++i) {
    if (ParsePidToken(tokens[i].text, &pid, &tid)) {
      size_t next = i + 1;
      if (next < tokens.size() && IsCpuToken(tokens[next].text)) ++next;
      *shape = HeaderShape{i, next, std::nullopt};
      return true;
    }
  }
  return false;
}

// "[0x55c4b1b6a000(0x1000) @ 0x1000 fe:00 2400281 726913354]: r-xp /usr/lib/x" (MMAP2) or
// "[0xffffffff81000000(0x1276508) @ 0xffffffff81000000]: x [kernel.kallsyms]_text" (MMAP).
bool ParseMmapBody(std::string_view body, ScriptEvent* event) {
  const size_t open = body.find('[');
  const size_t paren = body.find('(', open);
  const size_t close_paren = body.find(')', paren);
  const size_t at = body.find(" @ ", close_paren);
  const size_t end = body.find("]: ", at);
  if (open == std::string_view::npos || paren == std::string_view::npos || close_paren == std::string_view::npos ||
      at == std::string_view::npos || end == std::string_view::npos) {
    return false;
  }
  std::string_view pgoff = body.substr(at + 3, end - at - 3);
  pgoff = pgoff.substr(0, pgoff.find(' '));
  if (!ParseHex(body.substr(open + 1, paren - open - 1), &event->start) ||
      !ParseHex(body.substr(paren + 1, close_paren - paren - 1), &event->len) || !ParseHex(pgoff, &event->pgoff)) {
    return false;
  }
  std::string_view rest = body.substr(end + 3);
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos) return false;
  event->prot = std::string(rest.substr(0, space));
  // The path is everything after the protection field; it may hold spaces.
  std::string_view path = rest.substr(space + 1);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.remove_suffix(1);
  event->path = std::string(path);
  return true;
}

// " 27174/27174: [..." -> the pid and tid before the colon.
bool ParseEventPid(std::string_view body, ScriptEvent* event) {
  body = TrimSpace(body);
  const size_t colon = body.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view ids = body.substr(0, colon);
  const size_t slash = ids.find('/');
  if (slash == std::string_view::npos) return false;
  return ParseDecimal(ids.substr(0, slash), &event->pid) && ParseDecimal(ids.substr(slash + 1), &event->tid);
}

}  // namespace

bool ParseHex(std::string_view s, uint64_t* value) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int d = HexDigit(c);
    if (d < 0) return false;
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
  const std::string_view fraction = token.substr(dot + 1);
  if (!AllDigits(whole) || !AllDigits(fraction) || whole.size() > 10 || fraction.size() > 9) return false;
  uint64_t seconds = 0;
  for (char c : whole) seconds = seconds * 10 + static_cast<uint64_t>(c - '0');
  uint64_t nanos = 0;
  for (size_t i = 0; i < 9; ++i) nanos = nanos * 10 + (i < fraction.size() ? static_cast<uint64_t>(fraction[i] - '0') : 0);
  *ns = seconds * 1000000000ull + nanos;
  return true;
}

bool ParseFrameLine(std::string_view line, ScriptFrame* frame) {
  line = TrimSpace(line);
  const size_t space = line.find_first_of(" \t");
  if (!ParseHex(line.substr(0, space), &frame->addr)) return false;
  std::string_view rest = space == std::string_view::npos ? std::string_view() : TrimSpace(line.substr(space));
  frame->dso.clear();
  // The DSO is the parenthesised group that ends the line ("(/usr/lib/x.so (deleted))" nests):
  // match its opening parenthesis from the end. Only a path or a [bracketed] name counts, so a
  // symbol such as "Foo.bar(int)" printed without a DSO stays a symbol.
  if (!rest.empty() && rest.back() == ')') {
    int depth = 0;
    size_t open = std::string_view::npos;
    for (size_t i = rest.size(); i-- > 0;) {
      if (rest[i] == ')') ++depth;
      if (rest[i] == '(' && --depth == 0) {
        open = i;
        break;
      }
    }
    if (open != std::string_view::npos && open + 1 < rest.size() && (rest[open + 1] == '/' || rest[open + 1] == '[') &&
        (open == 0 || rest[open - 1] == ' ')) {
      frame->dso.assign(rest.substr(open + 1, rest.size() - open - 2));
      rest = TrimSpace(rest.substr(0, open));
    }
  }
  // "sym+0x1c" -> "sym"
  const size_t plus = rest.rfind("+0x");
  uint64_t ignored;
  if (plus != std::string_view::npos && plus > 0 && ParseHex(rest.substr(plus + 1), &ignored)) rest = rest.substr(0, plus);
  frame->sym.assign(rest);
  return true;
}

bool ParseEventLine(std::string_view line, ScriptEvent* event) {
  const size_t record = line.find("PERF_RECORD_");
  if (record == std::string_view::npos) return false;
  *event = ScriptEvent{};
  std::vector<Token> tokens;
  Tokenize(line.substr(0, record), tokens);
  for (const Token& token : tokens) {
    uint64_t ns;
    if (ParseSampleTime(token.text, &ns)) event->time_ns = ns;
  }
  std::string_view rest = line.substr(record + 12);
  auto starts = [&](std::string_view word) {
    if (rest.substr(0, word.size()) != word) return false;
    rest.remove_prefix(word.size());
    return true;
  };
  if (starts("MMAP2") || starts("MMAP")) {
    event->kind = ScriptEventKind::kMmap;
    return ParseEventPid(rest, event) && ParseMmapBody(rest, event);
  }
  if (starts("COMM")) {
    event->kind = ScriptEventKind::kComm;
    if (starts(" exec")) event->exec = true;
    if (!starts(": ")) return false;
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
    // "comm:pid/tid"; the comm may itself hold colons, so split at the last one.
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view ids = rest.substr(colon + 1);
    const size_t slash = ids.find('/');
    if (slash == std::string_view::npos || !ParseDecimal(ids.substr(0, slash), &event->pid) ||
        !ParseDecimal(ids.substr(slash + 1), &event->tid)) {
      return false;
    }
    event->comm = std::string(rest.substr(0, colon));
    return true;
  }
  const bool fork = starts("FORK");
  if (fork || starts("EXIT")) {
    event->kind = fork ? ScriptEventKind::kFork : ScriptEventKind::kExit;
    // "(pid:tid):(ppid:ptid)"
    int64_t v[4];
    size_t pos = 0;
    for (int pair = 0; pair < 2; ++pair) {
      const size_t open = rest.find('(', pos);
      const size_t colon = open == std::string_view::npos ? open : rest.find(':', open);
      const size_t close = colon == std::string_view::npos ? colon : rest.find(')', colon);
      if (close == std::string_view::npos || !ParseDecimal(rest.substr(open + 1, colon - open - 1), &v[2 * pair]) ||
          !ParseDecimal(rest.substr(colon + 1, close - colon - 1), &v[2 * pair + 1])) {
        return false;
      }
      pos = close;
    }
    event->pid = v[0];
    event->tid = v[1];
    event->ppid = v[2];
    event->ptid = v[3];
    return true;
  }
  return false;
}

bool ScriptParser::ParseHeader(std::string_view line) {
  static thread_local std::vector<Token> tokens;
  Tokenize(line, tokens);
  HeaderShape shape;
  if (!FindHeaderShape(tokens, true, &shape) && !FindHeaderShape(tokens, false, &shape)) return false;
  sample_.comm.assign(TrimSpace(line.substr(0, tokens[shape.pid].at)));
  ParsePidToken(tokens[shape.pid].text, &sample_.pid, &sample_.tid);
  sample_.time_ns = shape.time_ns;
  sample_.period = 0;
  sample_.event.clear();
  size_t r = shape.next;
  const size_t n = tokens.size();
  auto is_event = [&](size_t i) {
    return i < n && tokens[i].text.size() > 1 && tokens[i].text.back() == ':';
  };
  uint64_t hex, period;
  if (r < n && ParseU64(tokens[r].text, &period) && is_event(r + 1)) {
    sample_.period = period;
    sample_.event.assign(tokens[r + 1].text.substr(0, tokens[r + 1].text.size() - 1));
    r += 2;
  } else if (is_event(r)) {
    sample_.event.assign(tokens[r].text.substr(0, tokens[r].text.size() - 1));
    r += 1;
  } else if (shape.time_ns && r + 2 < n && ParseU64(tokens[r].text, &period) && ParseHex(tokens[r + 1].text, &hex)) {
    // "TIME: PERIOD IP SYM": a period without the event field.
    sample_.period = period;
    r += 1;
  } else if (shape.time_ns && r + 1 == n && ParseU64(tokens[r].text, &period)) {
    sample_.period = period;
    r += 1;
  }
  frame_count_ = 0;
  header_frame_ = false;
  if (r < n) {
    if (sample_.frames.empty()) sample_.frames.emplace_back();
    if (ParseFrameLine(line.substr(tokens[r].at), &sample_.frames[0])) {
      frame_count_ = 1;
      header_frame_ = true;
    }
  }
  return true;
}

void ScriptParser::Feed(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (TrimSpace(line).empty()) {
    Flush();
    return;
  }
  // Call-chain frames are tab-indented: the fast path for the bulk of the input.
  if (line[0] != '\t') {
    if (line.find("PERF_RECORD_") != std::string_view::npos) {
      ScriptEvent event;
      if (ParseEventLine(line, &event)) {
        Flush();
        sink_.OnEvent(event);
        return;
      }
    }
    // A header: with its time field, or (not indented) the pid-only shapes fold accepts.
    static thread_local std::vector<Token> tokens;
    Tokenize(line, tokens);
    HeaderShape shape;
    const bool indented = line[0] == ' ';
    if (FindHeaderShape(tokens, true, &shape) || (!indented && FindHeaderShape(tokens, false, &shape))) {
      Flush();
      active_ = ParseHeader(line);
      return;
    }
  }
  if (active_) {
    if (frame_count_ == sample_.frames.size()) sample_.frames.emplace_back();
    if (ParseFrameLine(line, &sample_.frames[frame_count_])) {
      if (header_frame_) {
        // The chain that follows supersedes the single ip printed on the header line.
        sample_.frames[0] = std::move(sample_.frames[frame_count_]);
        frame_count_ = 0;
        header_frame_ = false;
      }
      ++frame_count_;
      sample_.call_chain = true;
      return;
    }
  }
  ++unrecognized_lines_;
}

void ScriptParser::Flush() {
  if (active_) {
    // Hand out exactly the frames in use; the spare elements (and their string buffers) are
    // parked and come back for the next sample, so a long input allocates almost nothing.
    spare_.clear();
    for (size_t i = frame_count_; i < sample_.frames.size(); ++i) spare_.push_back(std::move(sample_.frames[i]));
    sample_.frames.resize(frame_count_);
    sink_.OnSample(sample_);
    for (ScriptFrame& frame : spare_) sample_.frames.push_back(std::move(frame));
  }
  active_ = false;
  frame_count_ = 0;
  header_frame_ = false;
  sample_.call_chain = false;
}

void ScriptParser::Finish() { Flush(); }

}  // namespace jitdump::report
