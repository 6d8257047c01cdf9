#include "jitdump/symbols/symbol_table.h"

#include <algorithm>
#include <cstring>

#include "jitdump/symbols/demangle.h"

namespace jitdump::symbols {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t RoundUpToPage(uint64_t value) {
  const uint64_t rounded = (value + kPage - 1) & ~(kPage - 1);
  return rounded < value ? value : rounded;  // no wrap at the top of the address space
}

size_t LeadingUnderscores(std::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// perf's choose_best_symbol: true when `a` (added first) stays over `b`.
bool KeepFirst(const SymbolTable::Symbol& a, std::string_view a_name, const SymbolTable::Symbol& b,
               std::string_view b_name) {
  const uint64_t a_size = a.end - a.start;
  const uint64_t b_size = b.end - b.start;
  if (b_size == 0 && a_size > 0) return true;
  if (a_size == 0 && b_size > 0) return false;
  const bool a_weak = a.binding == Binding::kWeak;
  const bool b_weak = b.binding == Binding::kWeak;
  if (b_weak && !a_weak) return true;
  if (a_weak && !b_weak) return false;
  const bool a_global = a.binding == Binding::kGlobal;
  const bool b_global = b.binding == Binding::kGlobal;
  if (a_global && !b_global) return true;
  if (b_global && !a_global) return false;
  const size_t a_underscores = LeadingUnderscores(a_name);
  const size_t b_underscores = LeadingUnderscores(b_name);
  if (b_underscores > a_underscores) return true;
  if (a_underscores > b_underscores) return false;
  if (a_name.size() > b_name.size()) return true;
  if (a_name.size() < b_name.size()) return false;
  // perf's x86 arch__choose_best_symbol: the kernel's "SyS" syscall aliases lose.
  if (a_name.starts_with("SyS") || a_name.starts_with("compat_SyS")) return false;
  return true;
}

}  // namespace

const SymbolTable::Symbol* SymbolTable::Find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t value, const Symbol& s) { return value < s.start; });
  // The nearest symbol that starts at or before the address covers it, or (when symbols nest,
  // which only PLT symbols added after the fix-ups can make) one of the few before it.
  constexpr int kNestedLookBack = 8;
  for (int i = 0; i < kNestedLookBack && it != symbols_.begin(); ++i) {
    --it;
    if (address < it->end || (address == it->start && it->end == it->start)) return &*it;
  }
  return nullptr;
}

std::string_view SymbolTable::Name(const Symbol& symbol) const {
  if (symbol.name >= names_.size()) return {};
  return std::string_view(names_.c_str() + symbol.name);
}

void SymbolTable::Builder::Add(uint64_t start, uint64_t size, Binding binding, std::string_view name, bool spelled,
                               bool module) {
  Symbol symbol;
  symbol.start = start;
  // perf: end = start + len, unchecked; a size that wraps is treated as no size.
  symbol.end = size != 0 && start + size > start ? start + size : start;
  symbol.name = static_cast<uint32_t>(names_.size());
  symbol.spelled = spelled;
  symbol.module = module;
  symbol.binding = binding;
  // A name may not hold a NUL (it ends one); a string table's names never do.
  names_.append(name.substr(0, name.find('\0')));
  names_.push_back('\0');
  symbols_.push_back(symbol);
}

std::string SymbolTable::Builder::DisplayName(const Symbol& symbol) const {
  const std::string_view raw(names_.c_str() + symbol.name);
  return symbol.spelled ? std::string(raw) : DemangleLikePerf(raw);
}

void SymbolTable::Builder::FinishPass(bool kallsyms) {
  // perf's tree keeps symbols of equal start in insertion order: a stable sort does too.
  std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  if (symbols_.empty()) return;
  // symbols__fixup_end
  for (size_t i = 1; i < symbols_.size(); ++i) {
    Symbol& prev = symbols_[i - 1];
    const Symbol& curr = symbols_[i];
    if (prev.end != prev.start) continue;
    if (kallsyms && prev.module != curr.module) {
      prev.end = RoundUpToPage(prev.end + kPage);
    } else {
      prev.end = curr.start;
    }
  }
  Symbol& last = symbols_.back();
  if (last.end == last.start) last.end = RoundUpToPage(last.start) + kPage;
  // symbols__fixup_duplicate
  std::vector<Symbol> kept;
  kept.reserve(symbols_.size());
  for (const Symbol& symbol : symbols_) {
    if (!kept.empty() && kept.back().start == symbol.start) {
      if (!KeepFirst(kept.back(), DisplayName(kept.back()), symbol, DisplayName(symbol))) kept.back() = symbol;
      continue;
    }
    kept.push_back(symbol);
  }
  symbols_ = std::move(kept);
}

SymbolTable SymbolTable::Builder::Build() {
  // Symbols added after the last pass (perf's PLT symbols) are sorted in, not fixed up.
  std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
  SymbolTable table;
  table.symbols_ = std::move(symbols_);
  table.symbols_.shrink_to_fit();
  table.names_ = std::move(names_);
  table.names_.shrink_to_fit();
  symbols_.clear();
  names_.clear();
  return table;
}

}  // namespace jitdump::symbols
