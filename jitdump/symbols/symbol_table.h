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
// Where symbols overlap (perf adds PLT symbols after its fix-ups, and a symbol without a size
// that precedes .plt, such as _init, then covers the PLT entries too), which one perf names
// depends on the shape of its red-black tree. So the table is that tree: built by the same
// sequence of insertions and removals as perf's (Linux's rbtree, equal starts to the right),
// searched as perf's symbols__find searches it.
// Addresses are whatever space the caller builds the table in (perf's: file offsets for user
// space, kernel addresses for kallsyms). Memory: 40 bytes per symbol plus its name.
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
    // The tree (indexes into symbols(); kNone for none).
    bool red = false;
    bool live = true;  // false once perf's duplicate fix-up removed it
    uint32_t left = kNone;
    uint32_t right = kNone;
    uint32_t parent = kNone;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  // The symbol covering `address`, or nullptr.
  const Symbol* Find(uint64_t address) const;
  std::string_view Name(const Symbol& symbol) const;
  size_t size() const { return live_; }
  // Every symbol ever added, removed ones included (an index here names a symbol).
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
    // The table; symbols added after the last pass (perf's PLT symbols) are not fixed up.
    SymbolTable Build();
    size_t size() const { return live_; }
    // The name perf compares when two symbols start together: the demangled one.
    std::string DisplayName(const Symbol& symbol) const;

   private:
    void Insert(uint32_t node);
    void Erase(uint32_t node);
    void RotateLeft(uint32_t x);
    void RotateRight(uint32_t x);
    void Replace(uint32_t old_node, uint32_t new_node);  // in old_node's parent
    uint32_t First() const;
    uint32_t Next(uint32_t node) const;
    bool Red(uint32_t node) const { return node != kNone && symbols_[node].red; }

    std::vector<Symbol> symbols_;
    uint32_t root_ = kNone;
    size_t live_ = 0;
    std::string names_;
  };

 private:
  std::vector<Symbol> symbols_;
  uint32_t root_ = kNone;
  size_t live_ = 0;
  std::string names_;
};

}  // namespace jitdump::symbols
