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
  explicit Parser(Kallsyms* out) : out_(out) {}

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
    if (name == "_text" && module.empty() && out_->text == 0) out_->text = address;
    if (!KeptType(type) || name.empty() || name[0] == '$') return true;
    // perf drops x86-64's entry trampoline symbols (the trampolines name the text they map).
    if (name == "__entry_SYSCALL_64_trampoline") return true;
    if (builder_.size() >= kMaxKallsymsSymbols) return false;
    builder_.Add(address, 0, BindingOfType(type), name, /*spelled=*/true, /*module=*/!module.empty());
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

  bool Finish(std::string* error) {
    if (lines_ > 0 && !any_address_) out_->hidden = true;
    if (builder_.size() == 0 || out_->hidden) {
      *error = out_->hidden ? "the kernel hides its symbol addresses (kptr_restrict; run as root)"
                            : "no kernel symbols in it";
      return false;
    }
    builder_.FinishPass(/*kallsyms=*/true);
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
  Kallsyms* out_;
  SymbolTable::Builder builder_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> modules_;
  std::pair<const std::string, std::pair<uint64_t, uint64_t>>* module_ = nullptr;  // the last line's
  uint64_t lines_ = 0;
  bool any_address_ = false;
};

}  // namespace

std::string_view Kallsyms::ModuleAt(uint64_t address) const {
  auto it = std::upper_bound(modules.begin(), modules.end(), address,
                             [](uint64_t value, const Module& m) { return value < m.start; });
  if (it == modules.begin()) return {};
  --it;
  return address < it->end ? std::string_view(it->name) : std::string_view();
}

bool ParseKallsyms(std::string_view text, Kallsyms* out, std::string* error) {
  *out = Kallsyms();
  Parser parser(out);
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    if (!parser.Line(line)) break;
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return parser.Finish(error);
}

bool ReadKallsyms(const std::string& path, Kallsyms* out, std::string* error) {
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
  Parser parser(out);
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
    } else {
      std::memmove(buffer.get(), at, held);
    }
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
