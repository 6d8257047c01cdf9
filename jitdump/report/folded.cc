#include "jitdump/report/folded.h"

#include <algorithm>
#include <charconv>
#include <span>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/report/sequence_sort.h"

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
// suffix). Each segment of a stack is stored as a token whose number orders it (see Tokens), so
// stacks compare as arrays of numbers in the byte order of the text they stand for, and two
// stacks of the same text have the same tokens: they merge when they are added.
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
    std::vector<uint32_t> thread_of(profile.samples.size());
    std::unordered_map<std::string_view, uint32_t> threads;  // the profile's names -> text
    for (size_t i = 0; i < profile.samples.size(); ++i) {
      const std::string& name = profile.samples[i].thread;
      const auto [it, inserted] = threads.try_emplace(name, static_cast<uint32_t>(texts_.size()));
      if (inserted) {
        std::string thread;
        AppendName(thread, name.empty() ? std::string_view("[unknown]") : std::string_view(name));
        texts_.push_back(std::move(thread));
      }
      thread_of[i] = it->second;
    }
    RankTokens();
    TokensOfLocations(profile);

    // Each stack is written where it will stay, after the stacks before it; a stack whose text
    // is already there is counted there and its copy dropped. The room is reserved from the most
    // the stacks can take, so nothing moves while they are added.
    size_t most = 0;
    for (const Sample& sample : profile.samples) {
      most += 1;
      for (uint32_t location : sample.locations) most += location_tokens_[location + 1] - location_tokens_[location];
    }
    segments_.resize(most);
    stacks_.reserve(profile.samples.size());
    Grow(profile.samples.size());
    for (size_t i = 0; i < profile.samples.size(); ++i) {
      const Sample& sample = profile.samples[i];
      uint32_t* const begin = segments_.data() + used_;
      uint32_t* end = begin;
      *end++ = mid_[thread_of[i]];
      for (size_t l = sample.locations.size(); l-- > 0;) {
        const uint32_t location = sample.locations[l];
        // A plain loop: a location has one or a few tokens, too few for memmove's call to pay.
        for (uint32_t k = location_tokens_[location]; k < location_tokens_[location + 1]; ++k) {
          *end++ = location_tokens_[k];
        }
      }
      // The last segment ends the line: its token is the text's own rank, not the text + ';' one.
      end[-1] = last_[end[-1]];
      Add(static_cast<size_t>(end - begin), sample.count);
    }
  }

  // Calls emit(text, count) for each distinct stack, in the byte order of the texts. A text is
  // built from the one before it: sorted stacks share long prefixes, which are kept as they are
  // and not appended again token by token.
  template <typename Emit>
  void ForEachText(Emit emit) const {
    std::vector<uint32_t> order(stacks_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    SortSequences(order.data(), order.data() + order.size(), 0,
                  [this](uint32_t stack, size_t depth) { return TokenAt(stack, depth); });
    std::string text;
    std::vector<size_t> ends;  // ends[k]: where the text of the stack's token k ends in `text`
    std::span<const uint32_t> previous;
    for (const uint32_t stack : order) {
      const std::span<const uint32_t> tokens = Tokens(stack);
      size_t shared = 0;  // equal tokens spell equal text
      while (shared < tokens.size() && shared < previous.size() && tokens[shared] == previous[shared]) ++shared;
      text.resize(shared == 0 ? 0 : ends[shared - 1]);
      ends.resize(shared);
      for (size_t k = shared; k < tokens.size(); ++k) {
        text.append(text_of_[tokens[k]]);
        ends.push_back(text.size());
      }
      previous = tokens;
      emit(std::string_view(text), stacks_[stack].count);
    }
  }

 private:
  struct Stack {
    size_t begin = 0;  // tokens in segments_[begin, end)
    size_t end = 0;
    uint64_t count = 0;
    uint64_t hash = 0;
  };

  std::span<const uint32_t> Tokens(uint32_t stack) const {
    const Stack& s = stacks_[stack];
    return std::span<const uint32_t>(segments_.data() + s.begin, s.end - s.begin);
  }

  // The token at `depth` of `stack`, or -1 past its end (a shorter stack first).
  int64_t TokenAt(uint32_t stack, size_t depth) const {
    const Stack& s = stacks_[stack];
    return depth < s.end - s.begin ? int64_t{segments_[s.begin + depth]} : -1;
  }

  // Tokens: every segment text t is ranked twice in one order, as t + ";" (a segment that more
  // segments follow: the next one begins with ';') and as t alone (the last one). Comparing two
  // stacks token by token then gives the order of their texts byte by byte: at the first tokens
  // that differ, either the texts differ within the shorter one (the ranks order them), or one is
  // a prefix of the other and what follows it (';' or the end of the line) is part of its token.
  // No name holds ';' (AppendName replaces it), so t + ";" never equals another segment's text.
  void RankTokens() {
    const uint32_t n = static_cast<uint32_t>(texts_.size());
    std::vector<std::string> keys;
    keys.reserve(2 * size_t{n});
    for (const std::string& t : texts_) keys.push_back(t + ';');
    for (const std::string& t : texts_) keys.push_back(t);
    std::vector<uint32_t> order(2 * size_t{n});
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
    std::vector<uint32_t> rank(order.size());  // rank[k]: distinct keys before order[k]
    for (size_t k = 1; k < order.size(); ++k) rank[k] = rank[k - 1] + (keys[order[k]] != keys[order[k - 1]]);
    mid_.assign(n, 0);
    text_of_.assign(order.size(), std::string_view());
    for (size_t k = 0; k < order.size(); ++k) {
      text_of_[rank[k]] = texts_[order[k] % n];  // equal keys are equal texts: any spells the token
      if (order[k] < n) mid_[order[k]] = rank[k];
    }
    // The stack under construction holds mid tokens; its last one becomes last_[mid token].
    last_.assign(order.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) {
      if (order[k] >= n) last_[mid_[order[k] - n]] = rank[k];
    }
  }

  // Each location's mid tokens outermost first (its lines backwards), after the offsets of every
  // location's run in the same array: location l's tokens are
  // location_tokens_[location_tokens_[l], location_tokens_[l + 1]).
  void TokensOfLocations(const Profile& profile) {
    location_tokens_.resize(profile.locations.size() + 1);
    for (size_t l = 0; l < profile.locations.size(); ++l) {
      const Location& location = profile.locations[l];
      location_tokens_[l] = static_cast<uint32_t>(location_tokens_.size());
      for (size_t k = location.lines.size(); k-- > 0;) location_tokens_.push_back(mid_[location.lines[k].function]);
    }
    location_tokens_[profile.locations.size()] = static_cast<uint32_t>(location_tokens_.size());
  }

  // Counts the stack just written at segments_[used_, used_ + size).
  void Add(size_t size, uint64_t count) {
    const uint32_t* const key = segments_.data() + used_;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < size; ++k) h = (h ^ key[k]) * 0x100000001b3ull;
    h ^= h >> 32;
    if (2 * (stacks_.size() + 1) > slots_.size()) Grow(stacks_.size() + 1);
    size_t i = h & (slots_.size() - 1);
    for (;; i = (i + 1) & (slots_.size() - 1)) {
      const uint32_t index = slots_[i];
      if (index == kEmpty) break;
      const std::span<const uint32_t> tokens = Tokens(index);
      if (stacks_[index].hash == h && std::equal(tokens.begin(), tokens.end(), key, key + size)) {
        stacks_[index].count += count;
        return;
      }
    }
    slots_[i] = static_cast<uint32_t>(stacks_.size());
    stacks_.push_back(Stack{used_, used_ + size, count, h});
    used_ += size;
  }

  // Makes room for `stacks` stacks at most half full.
  void Grow(size_t stacks) {
    size_t size = slots_.empty() ? 1024 : slots_.size();
    while (size < 2 * stacks) size *= 2;
    if (size == slots_.size()) return;
    slots_.assign(size, kEmpty);
    for (uint32_t index = 0; index < stacks_.size(); ++index) {
      size_t i = stacks_[index].hash & (slots_.size() - 1);
      while (slots_[i] != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = index;
    }
  }

  std::vector<std::string> texts_;  // functions' segments, then threads'
  std::vector<uint32_t> mid_;       // text -> its token followed by more segments
  std::vector<uint32_t> last_;      // mid token -> the same text's token as the last segment
  std::vector<std::string_view> text_of_;  // token -> a text that spells it (in texts_)
  std::vector<uint32_t> location_tokens_;
  std::vector<uint32_t> segments_;  // the stacks' tokens, stack after stack (used_ of them so far)
  size_t used_ = 0;
  std::vector<Stack> stacks_;
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<uint32_t> slots_;  // open addressing over stacks_ by hash
};

}  // namespace

std::map<std::string, uint64_t> FoldStacks(const Profile& profile, const FoldedOptions& options) {
  std::map<std::string, uint64_t> stacks;
  Folder(profile, options).ForEachText([&](std::string_view text, uint64_t count) {
    stacks.emplace_hint(stacks.end(), text, count);
  });
  return stacks;
}

void WriteFolded(const Profile& profile, const FoldedOptions& options, std::ostream& out) {
  constexpr size_t kFlushBytes = 1 << 20;
  std::string buffer;
  buffer.reserve(kFlushBytes + 4096);
  Folder(profile, options).ForEachText([&](std::string_view text, uint64_t count) {
    char digits[24];
    digits[0] = ' ';
    char* end = std::to_chars(digits + 1, digits + sizeof digits - 1, count).ptr;
    *end++ = '\n';
    buffer.append(text);
    buffer.append(digits, static_cast<size_t>(end - digits));
    if (buffer.size() >= kFlushBytes) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  });
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace jitdump::report
