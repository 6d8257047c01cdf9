#include "jitdump/symbols/kallsyms.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>

namespace jitdump::symbols {
namespace {

// perf's KSYM_NAME_LEN (6.1): longer names are cut there.
constexpr size_t kMaxNameLength = 512;
// The notes file is a few hundred bytes; more is no kernel's.
constexpr size_t kMaxNotesBytes = 64 * 1024;
constexpr uint32_t kNoteGnuBuildId = 3;  // NT_GNU_BUILD_ID

// The value of a hex digit, or -1: a table, not a chain of range tests (a kallsyms line's
// address is 16 digits, and there are 100,000+ lines).
constexpr std::array<int8_t, 256> kHexDigits = [] {
  std::array<int8_t, 256> digits{};
  for (int c = 0; c < 256; ++c) {
    digits[c] = c >= '0' && c <= '9' ? static_cast<int8_t>(c - '0')
                : c >= 'a' && c <= 'f' ? static_cast<int8_t>(c - 'a' + 10)
                : c >= 'A' && c <= 'F' ? static_cast<int8_t>(c - 'A' + 10)
                                       : static_cast<int8_t>(-1);
  }
  return digits;
}();

// The address a line starts with: 1 to 16 hex digits, then a space. `*end` is where the space
// is. False for anything else.
bool ParseLineAddress(std::string_view line, uint64_t* value, size_t* end) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < line.size(); ++i) {
    const int digit = kHexDigits[static_cast<unsigned char>(line[i])];
    if (digit < 0) break;
    if (i == 16) return false;
    v = v << 4 | static_cast<uint64_t>(digit);
  }
  if (i == 0 || i == line.size() || line[i] != ' ') return false;
  *value = v;
  *end = i;
  return true;
}

// ASCII only, without the locale lookups of <cctype> (a call per line of 100,000+).
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }

// perf's symbol_type__filter.
bool KeptType(char type) {
  const char upper = IsUpper(type) || type < 'a' || type > 'z' ? type : static_cast<char>(type - 'a' + 'A');
  return upper == 'T' || upper == 'W' || upper == 'D' || upper == 'B';
}

Binding BindingOfType(char type) {
  if (type == 'W') return Binding::kWeak;
  return IsUpper(type) ? Binding::kGlobal : Binding::kLocal;
}

class Parser {
 public:
  Parser(Kallsyms* out, const KallsymsWanted* wanted) : out_(out), wanted_(wanted) {
    if (wanted_ != nullptr && wanted_->recorded_text == 0) StartFiltering(0);
  }

  // One line, without its newline.
  bool Line(std::string_view line) {
    uint64_t address = 0;
    size_t space = 0;
    if (!ParseLineAddress(line, &address, &space)) return true;
    if (line.size() < space + 3 || line[space + 2] != ' ') return true;
    const char type = line[space + 1];
    std::string_view name = line.substr(space + 3);
    if (name.size() > kMaxNameLength) name = name.substr(0, kMaxNameLength);
    if (address != 0) any_address_ = true;
    ++lines_;
    std::string_view module;
    if (const size_t tab = name.find('\t'); tab != std::string_view::npos) {
      module = name.substr(tab + 1);
      name = name.substr(0, tab);
    }
    if (name == "_text" && module.empty() && out_->text == 0) {
      out_->text = address;
      if (wanted_ != nullptr && !filtering_) StartFiltering(address - wanted_->recorded_text);
    }
    if (!KeptType(type) || name.empty() || name[0] == '$') return true;
    // perf drops x86-64's entry trampoline symbols (the trampolines name the text they map).
    if (name == "__entry_SYSCALL_64_trampoline") return true;
    if (Added() >= kMaxKallsymsSymbols) return false;
    if (module.empty()) out_->image_last = std::max(out_->image_last, address);
    if (wanted_ == nullptr) {
      builder_.Add(address, 0, BindingOfType(type), name, /*spelled=*/true, /*module=*/!module.empty());
    } else {
      Offer(address, BindingOfType(type), name, !module.empty());
    }
    if (!module.empty()) {
      // A module's symbols come together: its entry is looked up when the module changes.
      if (module_ == nullptr || module != module_->first) {
        module_ = &*modules_.try_emplace(std::string(module), address, address).first;
      }
      module_->second.first = std::min(module_->second.first, address);
      module_->second.second = std::max(module_->second.second, address);
    }
    return true;
  }

  // The text the lines passed to Line were in is about to change: the names of the symbols not
  // yet decided (views into it) are copied aside. Most symbols are decided at the next line and
  // dropped, their names never copied.
  void TextChanges() {
    if (pending_.empty()) return;
    std::string names;
    for (const Pending& p : pending_) names.append(p.name);
    pending_names_.swap(names);  // the old copy (some views may point into it) goes after this
    size_t at = 0;
    for (Pending& p : pending_) {
      p.name = std::string_view(pending_names_.data() + at, p.name.size());
      at += p.name.size();
    }
  }

  bool Finish(std::string* error) {
    if (lines_ > 0 && !any_address_) out_->hidden = true;
    out_->symbols = Added();
    if (out_->symbols == 0 || out_->hidden) {
      *error = out_->hidden ? "the kernel hides its symbol addresses (kptr_restrict; run as root)"
                            : "no kernel symbols in it";
      return false;
    }
    if (wanted_ == nullptr) {
      builder_.FinishPass(/*kallsyms=*/true);
    } else if (!BuildFiltered()) {
      out_->needs_full_read = true;
      return true;
    }
    out_->table = builder_.Build();
    for (const auto& [name, range] : modules_) {
      // A module's last symbol ends at most a page after its start (perf's rounding).
      const SymbolTable::Symbol* last = out_->table.Find(range.second);
      out_->modules.push_back(Kallsyms::Module{range.first, last != nullptr ? last->end : range.second + 1, name});
    }
    std::sort(out_->modules.begin(), out_->modules.end(),
              [](const Kallsyms::Module& a, const Kallsyms::Module& b) { return a.start < b.start; });
    return true;
  }

 private:
  // A symbol of a filtered read, kept or waiting for the decision: its line among the symbols
  // (an index into starts_) and its name in a string of names.
  struct Held {
    uint32_t line = 0;
    Binding binding = Binding::kLocal;
    bool module = false;
    uint32_t name = 0;
    uint32_t name_size = 0;
  };

  size_t Added() const { return wanted_ == nullptr ? builder_.size() : starts_.size(); }

  // The file's addresses of the wanted ones, known once the file's _text is.
  void StartFiltering(uint64_t delta) {
    filtering_ = true;
    want_.reserve(wanted_->addresses.size());
    for (uint64_t a : wanted_->addresses) want_.push_back(a + delta);
    std::sort(want_.begin(), want_.end());  // a delta that wraps reorders them
  }

  // Whether an address asked for lies in [from, to) (to == 0: no end). `from` mostly grows
  // from one call to the next (the file is sorted but for modules): the search starts from the
  // last one's answer and usually ends there.
  bool WantedIn(uint64_t from, uint64_t to) {
    if (next_want_ > 0 && want_[next_want_ - 1] >= from) {
      next_want_ = static_cast<size_t>(std::lower_bound(want_.begin(), want_.begin() + next_want_, from) - want_.begin());
    } else if (next_want_ < want_.size() && want_[next_want_] < from) {
      next_want_ = static_cast<size_t>(std::lower_bound(want_.begin() + next_want_, want_.end(), from) - want_.begin());
    }
    return next_want_ < want_.size() && (to == 0 || want_[next_want_] < to);
  }

  void Offer(uint64_t address, Binding binding, std::string_view name, bool module) {
    const auto line = static_cast<uint32_t>(starts_.size());
    starts_.push_back(address);
    in_module_.push_back(module);
    if (filtering_) Decide(address, /*last=*/false);
    Held held{line, binding, module, 0, static_cast<uint32_t>(name.size())};
    if (!filtering_ || module) {
      held.name = static_cast<uint32_t>(names_.size());
      names_.append(name);
      held_.push_back(held);
      return;
    }
    pending_start_ = address;
    pending_.push_back(Pending{held, name});
  }

  // The kernel symbols waiting at pending_start_ are decided by the next symbol read: one above
  // them with no wanted address in between ends a stretch they would name for none (the whole
  // file's next start is at or below this one); below them, or none, they are kept if any wanted
  // address is at or above them.
  void Decide(uint64_t next, bool last) {
    if (pending_.empty() || (!last && next == pending_start_)) return;
    const bool above = !last && next > pending_start_;
    if (WantedIn(pending_start_, above ? next : 0)) {
      for (const Pending& p : pending_) {
        Held held = p.held;
        held.name = static_cast<uint32_t>(names_.size());
        names_.append(p.name);
        held_.push_back(held);
      }
    }
    pending_.clear();
  }

  // The kept symbols into the builder, each ending where perf's fix-up over every symbol of the
  // file ends it. False when the whole file's symbols overlap somewhere (a symbol's page rounding
  // past the next one's start), where what perf names depends on all of them.
  bool BuildFiltered() {
    Decide(0, /*last=*/true);
    const size_t n = starts_.size();
    // Every symbol in perf's order (by start, then as read): the file's own, mostly.
    std::vector<uint32_t> order;
    std::vector<uint32_t> rank;
    const bool in_order = std::is_sorted(starts_.begin(), starts_.end());
    if (!in_order) {
      order.resize(n);
      for (uint32_t i = 0; i < n; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return starts_[a] < starts_[b]; });
      rank.resize(n);
      for (uint32_t k = 0; k < n; ++k) rank[order[k]] = k;
    }
    auto at = [&](size_t k) { return in_order ? static_cast<uint32_t>(k) : order[k]; };
    for (size_t k = 0; k + 1 < n; ++k) {
      const uint32_t p = at(k);
      const uint32_t next = at(k + 1);
      if (in_module_[p] != in_module_[next] &&
          SymbolTable::FixedUpEnd(starts_[p], true, &starts_[next]) > starts_[next]) {
        return false;
      }
    }
    // In the order read, as the whole file's builder adds them (equal starts stay in that order).
    std::sort(held_.begin(), held_.end(), [](const Held& a, const Held& b) { return a.line < b.line; });
    for (const Held& held : held_) {
      const size_t k = in_order ? held.line : rank[held.line];
      const uint64_t start = starts_[held.line];
      uint64_t end;
      if (k + 1 < n) {
        const uint32_t next = at(k + 1);
        end = SymbolTable::FixedUpEnd(start, in_module_[held.line] != in_module_[next], &starts_[next]);
      } else {
        end = SymbolTable::FixedUpEnd(start, false, nullptr);
      }
      builder_.AddEnded(start, end, held.binding, std::string_view(names_.data() + held.name, held.name_size),
                        /*spelled=*/true, held.module);
    }
    builder_.FinishPass(/*kallsyms=*/true, /*ends_given=*/true);
    out_->filtered = true;
    return true;
  }

  Kallsyms* out_;
  const KallsymsWanted* wanted_;
  SymbolTable::Builder builder_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> modules_;
  std::pair<const std::string, std::pair<uint64_t, uint64_t>>* module_ = nullptr;  // the last line's
  uint64_t lines_ = 0;
  bool any_address_ = false;
  // A filtered read (wanted_ set).
  bool filtering_ = false;     // the wanted addresses are known in the file's addresses
  std::vector<uint64_t> want_;  // those, sorted
  size_t next_want_ = 0;        // the first of them at or above the last WantedIn's `from`
  std::vector<uint64_t> starts_;    // every symbol's start, in the order read
  std::vector<uint8_t> in_module_;  // beside starts_
  std::vector<Held> held_;          // kept
  std::string names_;               // their names
  // The kernel symbols at pending_start_, not yet decided, with their names in the text being
  // parsed (or in pending_names_, once TextChanges copied them).
  struct Pending {
    Held held;
    std::string_view name;
  };
  std::vector<Pending> pending_;
  std::string pending_names_;
  uint64_t pending_start_ = 0;
};

}  // namespace

std::string_view Kallsyms::ModuleAt(uint64_t address) const {
  auto it = std::upper_bound(modules.begin(), modules.end(), address,
                             [](uint64_t value, const Module& m) { return value < m.start; });
  if (it == modules.begin()) return {};
  --it;
  return address < it->end ? std::string_view(it->name) : std::string_view();
}

bool ParseKallsyms(std::string_view text, Kallsyms* out, std::string* error, const KallsymsWanted* wanted) {
  *out = Kallsyms();
  Parser parser(out, wanted);
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    if (!parser.Line(line)) break;
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return parser.Finish(error);
}

bool ReadKallsyms(const std::string& path, Kallsyms* out, std::string* error, const KallsymsWanted* wanted) {
  *out = Kallsyms();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  // /proc files have size 0: a regular file is all that is asked.
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *error = path + ": not a regular file";
    return false;
  }
  Parser parser(out, wanted);
  // Streamed through a fixed buffer (a kallsyms file is 10+ MB): each read appends to what is
  // left of the last line, whole lines are parsed in place.
  constexpr size_t kBuffer = 256 * 1024;
  constexpr size_t kMaxLine = 4 * kMaxNameLength;  // longer lines are cut (their rest dropped)
  std::unique_ptr<char[]> buffer(new char[kBuffer]);
  size_t held = 0;       // bytes in the buffer
  bool skipping = false;  // inside the dropped rest of an overlong line
  bool more = true;
  while (more) {
    const ssize_t n = read(fd, buffer.get() + held, kBuffer - held);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    held += static_cast<size_t>(n);
    const char* at = buffer.get();
    const char* end = at + held;
    while (more && at < end) {
      const char* newline = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)));
      if (newline == nullptr) break;
      if (!skipping) more = parser.Line(std::string_view(at, static_cast<size_t>(newline - at)));
      skipping = false;
      at = newline + 1;
    }
    held = static_cast<size_t>(end - at);
    if (held >= kMaxLine) {
      // No newline in a whole line's room: parse what fits, skip the rest of it.
      if (!skipping) more = parser.Line(std::string_view(at, kMaxLine));
      skipping = true;
      held = 0;
    }
    parser.TextChanges();  // the parsed lines are overwritten from here on
    if (held > 0) std::memmove(buffer.get(), at, held);
  }
  if (more && held > 0 && !skipping) parser.Line(std::string_view(buffer.get(), held));
  close(fd);
  if (!parser.Finish(error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

std::vector<uint8_t> ParseNotesBuildId(std::span<const uint8_t> notes) {
  size_t pos = 0;
  auto align4 = [](size_t v) { return (v + 3) & ~static_cast<size_t>(3); };
  while (notes.size() - pos >= 12) {
    uint32_t header[3];
    std::memcpy(header, notes.data() + pos, sizeof(header));
    const size_t namesz = header[0];
    const size_t descsz = header[1];
    pos += 12;
    if (namesz > notes.size() - pos) break;
    const size_t name_at = pos;
    pos += align4(namesz);
    if (pos > notes.size() || descsz > notes.size() - pos) break;
    const size_t desc_at = pos;
    pos += align4(descsz);
    if (header[2] == kNoteGnuBuildId && namesz == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0 &&
        descsz > 0 && descsz <= 64) {
      return std::vector<uint8_t>(notes.begin() + desc_at, notes.begin() + desc_at + descsz);
    }
    if (pos > notes.size()) break;
  }
  return {};
}

std::vector<uint8_t> ReadNotesBuildId(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return {};
  std::vector<uint8_t> bytes(kMaxNotesBytes);
  size_t size = 0;
  while (size < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + size, bytes.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(size);
  return ParseNotesBuildId(bytes);
}

}  // namespace jitdump::symbols
