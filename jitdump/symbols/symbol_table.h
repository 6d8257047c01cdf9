// A file's function symbols as address ranges, with perf 6.1's rules for what a symbol covers
// (tools/perf/util/symbol.c), so that a lookup here names an address as `perf script` does:
//   - a symbol without a size ends where the next one starts; the last one at the next page
//     boundary after its start plus a page (for kallsyms: modules and the kernel do not run
//     into each other);
//   - of symbols that start at the same address one stays: the one with a size, else a global
//     over a weak over a local one, else the one with fewer leading underscores, else the
//     longer name, else the first;
//   - a lookup finds the symbol with start <= address < end (a symbol of size 0 covers its
//     start).
// Addresses are whatever space the caller builds the table in (perf's: file offsets for user
// space, kernel addresses for kallsyms). Memory: 24 bytes per symbol plus its name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::symbols {

enum class Binding : uint8_t { kLocal, kGlobal, kWeak };

class SymbolTable {
 public:
  struct Symbol {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive; == start for a symbol of size 0 that nothing followed
    uint32_t name = 0;  // offset of the NUL-terminated name in names_
    // The name is already spelled for display (perf's PLT names: "memcpy@plt"), not mangled.
    bool spelled = false;
    // A kernel module's symbol in kallsyms (perf's "[module]" names).
    bool module = false;
    Binding binding = Binding::kLocal;
  };

  // The symbol covering `address`, or nullptr.
  const Symbol* Find(uint64_t address) const;
  std::string_view Name(const Symbol& symbol) const;
  size_t size() const { return symbols_.size(); }
  const std::vector<Symbol>& symbols() const { return symbols_; }
  size_t bytes() const { return symbols_.capacity() * sizeof(Symbol) + names_.capacity(); }

  // Builds a table the way perf fills its symbol tree: symbols are added in passes (one per
  // symbol table read), each pass ends with perf's fix-ups over everything added so far.
  class Builder {
   public:
    void Add(uint64_t start, uint64_t size, Binding binding, std::string_view name, bool spelled = false,
             bool module = false);
    // perf's symbols__fixup_end then symbols__fixup_duplicate. `kallsyms`: the page rounding
    // between kernel and module symbols.
    void FinishPass(bool kallsyms = false);
    // The table (after a last FinishPass if symbols were added since; symbols added after the
    // last pass, as perf's PLT symbols, are not fixed up).
    SymbolTable Build();
    size_t size() const { return symbols_.size(); }
    // The name perf compares when two symbols start together: the demangled one.
    std::string DisplayName(const Symbol& symbol) const;

   private:
    std::vector<Symbol> symbols_;  // in perf's tree order after each pass
    std::string names_;
  };

 private:
  std::vector<Symbol> symbols_;  // sorted by start
  std::string names_;
};

}  // namespace jitdump::symbols
