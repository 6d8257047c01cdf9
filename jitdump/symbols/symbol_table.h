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
// depends on the shape of its red-black tree. So such a table is that tree: built by the same
// sequence of insertions and removals as perf's (Linux's rbtree, equal starts to the right),
// searched as perf's symbols__find searches it. Where no two symbols overlap (kallsyms, most
// files), at most one symbol covers an address and any search finds it: the table is then the
// symbols sorted by start, binary-searched, and the tree is never built. Where some do, the tree
// is built once to learn what it names in each stretch of addresses that overlapping symbols
// cover (its answer changes only at their starts and ends), and the table keeps those answers
// beside the sorted symbols: a lookup is one or two binary searches over arrays, not a walk of
// a tree of 40-byte nodes scattered by their order in the ELF file (a cache miss per level).
// Addresses are whatever space the caller builds the table in (perf's: file offsets for user
// space, kernel addresses for kallsyms). Memory: 40 bytes per symbol plus its name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/symbols/name_chunks.h"

namespace jitdump::symbols {

enum class Binding : uint8_t { kLocal, kGlobal, kWeak };

class SymbolTable {
 public:
  struct Symbol {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive; == start for a symbol of size 0 that nothing followed
    uint32_t name = 0;  // the NUL-terminated name's offset in names_
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

 private:
  // From `start` up to the next piece's start, perf's tree names `symbol` (an index into
  // symbols_; kNone: nothing; kOutside: the stretch is no overlap, the sorted symbols answer).
  struct Piece {
    uint64_t start = 0;
    uint32_t symbol = kNone;
  };
  static constexpr uint32_t kOutside = kNone - 1;

 public:
  // perf's symbols__fixup_end for a symbol without a size that starts at `start`: it ends where
  // the next one in start order starts (`next_start`), a page past its start rounded up when the
  // next one is of the other kind (kallsyms: a module's against the kernel's), or a page past the
  // page it starts in when none follows (`next_start` null).
  static uint64_t FixedUpEnd(uint64_t start, bool other_kind_next, const uint64_t* next_start);

  // The symbol covering `address`, or nullptr.
  const Symbol* Find(uint64_t address) const;
  std::string_view Name(const Symbol& symbol) const;
  size_t size() const { return live_; }
  // Every symbol the table holds, removed ones included in a tree (an index here names a
  // symbol); a sorted table holds the live ones only.
  const std::vector<Symbol>& symbols() const { return symbols_; }
  // Whether the table is searched as perf's tree (Builder::set_always_tree), not as sorted
  // symbols and, where they overlap, the tree's answers.
  bool is_tree() const { return !sorted_; }
  // Whether some symbols overlap (the tree's answers are kept for them).
  bool has_overlaps() const { return !pieces_.empty(); }

  // Builds a table the way perf fills its symbol tree: symbols are added in passes (one per
  // symbol table read), each pass ends with perf's fix-ups over everything added so far. The
  // fix-ups walk the symbols in the tree's order, which is the order of their starts (equal
  // starts in the order added) whatever the tree's shape: they run on that order, and the
  // insertions and removals are replayed into perf's tree only when the table needs it.
  class Builder {
   public:
    void Add(uint64_t start, uint64_t size, Binding binding, std::string_view name, bool spelled = false,
             bool module = false);
    // A symbol whose end perf's fix-up already gave (a filtered kallsyms read, FinishPass's
    // `ends_given`): kept as it is, also where the page rounding wrapped at the top of the
    // address space and the end lies below the start (the symbol then names nothing, as in perf).
    void AddEnded(uint64_t start, uint64_t end, Binding binding, std::string_view name, bool spelled, bool module);
    // perf's symbols__fixup_end then symbols__fixup_duplicate. `kallsyms`: the page rounding
    // between kernel and module symbols. `ends_given`: every symbol's end is already what the
    // fix-up gives over a larger set of symbols than the table holds (a filtered kallsyms read),
    // so only the duplicates are removed.
    void FinishPass(bool kallsyms = false, bool ends_given = false);
    // The table; symbols added after the last pass (perf's PLT symbols) are not fixed up.
    SymbolTable Build();
    size_t size() const { return live_; }
    // The name perf compares when two symbols start together: the demangled one.
    std::string DisplayName(const Symbol& symbol) const;
    // Tests: build perf's tree even when no symbols overlap, and search it (what the sorted
    // symbols and the tree's kept answers must equal).
    void set_always_tree(bool on) { always_tree_ = on; }

   private:
    // Merges the symbols added since into order_.
    void Sort();
    bool Overlapping() const;
    // What the tree (built) names in every stretch of addresses that overlapping symbols cover,
    // as pieces over the builder's symbol indexes.
    std::vector<Piece> OverlapPieces() const;
    // Perf's tree, from the insertions and removals as they happened.
    void Replay();
    void Insert(uint32_t node);
    void Erase(uint32_t node);
    void RotateLeft(uint32_t x);
    void RotateRight(uint32_t x);
    void Replace(uint32_t old_node, uint32_t new_node);  // in old_node's parent
    bool Red(uint32_t node) const { return node != kNone && symbols_[node].red; }

    std::vector<Symbol> symbols_;  // in the order added
    std::vector<uint32_t> order_;  // the live symbols sorted, in the tree's order
    size_t sorted_ = 0;            // symbols_[0, sorted_) have been merged into order_
    // A removal by a fix-up, after the symbols [0, added) were inserted.
    struct Removal {
      uint32_t symbol = 0;
      uint32_t added = 0;
    };
    std::vector<Removal> removals_;
    uint32_t root_ = kNone;
    size_t live_ = 0;
    NameChunks names_;
    bool always_tree_ = false;
  };

 private:
  // perf's symbols__find over the tree of `nodes` from `root`.
  static const Symbol* TreeFind(const std::vector<Symbol>& nodes, uint32_t root, uint64_t address);

  std::vector<Symbol> symbols_;
  std::vector<Piece> pieces_;  // by start; empty when no symbols overlap
  uint32_t root_ = kNone;
  size_t live_ = 0;
  NameChunks names_;
  bool sorted_ = false;  // symbols_ are the live symbols by start, none overlapping
};

}  // namespace jitdump::symbols
