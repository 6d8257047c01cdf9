#include "jitdump/report/folded.h"

#include <algorithm>
#include <span>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitdump::report {
namespace {

void AppendName(std::string& stack, std::string_view name) {
  for (char c : name) stack.push_back(c == ';' ? ',' : (c == '\n' || c == '\r') ? ' ' : c);
}

const char* Suffix(FrameKind kind) {
  switch (kind) {
    case FrameKind::kCompiled: return "_[j]";
    case FrameKind::kInlined: return "_[i]";
    case FrameKind::kInterpreted: return "_[0]";
    case FrameKind::kKernel: return "_[k]";
    default: return "";
  }
}

// The folded stacks as sequences of text segments, merged, without building the text of each
// sample: segment 0 is the thread's name, each further segment ";" + a function's name (and
// suffix). Two samples whose segments are the same fold to one line; their order is the byte
// order of the text they stand for, found by comparing segment by segment.
class Folder {
 public:
  Folder(const Profile& profile, const FoldedOptions& options) {
    texts_.reserve(profile.functions.size());
    for (const Function& f : profile.functions) {
      std::string text = ";";
      AppendName(text, f.name);
      if (options.annotate) text += Suffix(f.kind);
      texts_.push_back(std::move(text));
    }
    for (const Sample& sample : profile.samples) {
      std::string thread;
      AppendName(thread, sample.thread.empty() ? std::string_view("[unknown]") : std::string_view(sample.thread));
      const auto [tid, new_thread] = thread_ids_.try_emplace(thread, static_cast<uint32_t>(texts_.size()));
      if (new_thread) texts_.push_back(thread);
      key_.clear();
      key_.push_back(tid->second);
      for (size_t i = sample.locations.size(); i-- > 0;) {
        const Location& location = profile.locations[sample.locations[i]];
        for (size_t k = location.lines.size(); k-- > 0;) key_.push_back(location.lines[k].function);
      }
      Add(sample.count);
    }
  }

  // The distinct texts in byte order, each as (a stack, the samples of every stack with that
  // text: functions of one name but different files or kinds fold to one line).
  std::vector<std::pair<uint32_t, uint64_t>> Sorted() {
    RankSegments();
    std::vector<uint32_t> order(stacks_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return Compare(a, b) < 0; });
    std::vector<std::pair<uint32_t, uint64_t>> lines;
    for (uint32_t s : order) {
      if (!lines.empty() && Compare(lines.back().first, s) == 0) {
        lines.back().second += stacks_[s].count;
      } else {
        lines.emplace_back(s, stacks_[s].count);
      }
    }
    return lines;
  }

  void AppendText(uint32_t stack, std::string& out) const {
    for (uint32_t s : Segments(stack)) out += texts_[s];
  }

 private:
  struct Stack {
    size_t begin = 0;  // segments in segments_[begin, end)
    size_t end = 0;
    uint64_t count = 0;
    uint64_t hash = 0;
  };

  std::span<const uint32_t> Segments(uint32_t stack) const {
    const Stack& s = stacks_[stack];
    return std::span<const uint32_t>(segments_.data() + s.begin, s.end - s.begin);
  }

  void Add(uint64_t count) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t v : key_) h = (h ^ v) * 0x100000001b3ull;
    h ^= h >> 32;
    if (2 * (stacks_.size() + 1) > slots_.size()) Grow();
    size_t i = h & (slots_.size() - 1);
    for (;; i = (i + 1) & (slots_.size() - 1)) {
      const uint32_t index = slots_[i];
      if (index == kEmpty) break;
      const std::span<const uint32_t> seg = Segments(index);
      if (stacks_[index].hash == h && std::equal(seg.begin(), seg.end(), key_.begin(), key_.end())) {
        stacks_[index].count += count;
        return;
      }
    }
    Stack s;
    s.begin = segments_.size();
    segments_.insert(segments_.end(), key_.begin(), key_.end());
    s.end = segments_.size();
    s.count = count;
    s.hash = h;
    slots_[i] = static_cast<uint32_t>(stacks_.size());
    stacks_.push_back(s);
  }

  void Grow() {
    slots_.assign(slots_.empty() ? 1024 : 2 * slots_.size(), kEmpty);
    for (uint32_t index = 0; index < stacks_.size(); ++index) {
      size_t i = stacks_[index].hash & (slots_.size() - 1);
      while (slots_[i] != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = index;
    }
  }

  // Orders the segments' texts once: rank_[s] by the bytes of text + ';' (what follows a
  // segment inside a line, the next segment's separator), group_[s] equal for equal texts.
  void RankSegments() {
    std::vector<uint32_t> order(texts_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return texts_[x] < texts_[y]; });
    rank_.assign(texts_.size(), 0);
    group_.assign(texts_.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) {
      const bool same = k > 0 && texts_[order[k]] == texts_[order[k - 1]];
      group_[order[k]] = same ? group_[order[k - 1]] : static_cast<uint32_t>(k);
      rank_[order[k]] = group_[order[k]];
    }
  }

  // <0, 0, >0 as the texts of stacks a and b compare bytewise. Segments of equal text are skipped
  // whole; at the first two that differ, their order decides unless one text is a prefix of the
  // other (then the bytes after it do, read on across segment ends).
  int Compare(uint32_t a, uint32_t b) const {
    const std::span<const uint32_t> sa = Segments(a), sb = Segments(b);
    size_t i = 0, j = 0;
    while (i < sa.size() && j < sb.size() && group_[sa[i]] == group_[sb[j]]) ++i, ++j;
    if (i < sa.size() && j < sb.size()) {
      const std::string& x = texts_[sa[i]];
      const std::string& y = texts_[sb[j]];
      const size_t n = std::min(x.size(), y.size());
      if (x.compare(0, n, y, 0, n) != 0) return rank_[sa[i]] < rank_[sb[j]] ? -1 : 1;
    }
    size_t pi = 0, pj = 0;  // positions inside texts_[sa[i]], texts_[sb[j]]
    for (;;) {
      const bool end_a = i == sa.size(), end_b = j == sb.size();
      if (end_a || end_b) return end_a && end_b ? 0 : end_a ? -1 : 1;
      const std::string& ta = texts_[sa[i]];
      const std::string& tb = texts_[sb[j]];
      const size_t n = std::min(ta.size() - pi, tb.size() - pj);
      const int c = ta.compare(pi, n, tb, pj, n);
      if (c != 0) return c;
      pi += n;
      pj += n;
      if (pi == ta.size()) ++i, pi = 0;
      if (pj == tb.size()) ++j, pj = 0;
    }
  }

  std::vector<std::string> texts_;  // functions' segments, then threads'
  std::unordered_map<std::string, uint32_t> thread_ids_;
  std::vector<uint32_t> segments_;
  std::vector<Stack> stacks_;
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<uint32_t> slots_;  // open addressing over stacks_ by hash
  std::vector<uint32_t> key_;
  std::vector<uint32_t> rank_;
  std::vector<uint32_t> group_;
};

}  // namespace

std::map<std::string, uint64_t> FoldStacks(const Profile& profile, const FoldedOptions& options) {
  Folder folder(profile, options);
  std::map<std::string, uint64_t> stacks;
  std::string text;
  for (const auto& [s, count] : folder.Sorted()) {
    text.clear();
    folder.AppendText(s, text);
    stacks.emplace_hint(stacks.end(), text, count);
  }
  return stacks;
}

void WriteFolded(const Profile& profile, const FoldedOptions& options, std::ostream& out) {
  Folder folder(profile, options);
  std::string buffer;
  for (const auto& [s, count] : folder.Sorted()) {
    folder.AppendText(s, buffer);
    buffer += ' ';
    buffer += std::to_string(count);
    buffer += '\n';
    if (buffer.size() >= (1u << 20)) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace jitdump::report
