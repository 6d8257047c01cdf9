#include "jitdump/symbols/symbol_table.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "jitdump/format/radix_sort.h"
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

// perf's choose_best_symbol: true when `a` (added first) stays over `b`. The names (perf's,
// demangled) are made only when size and binding do not decide: demangling is the costly part,
// and two symbols spelled alike (a .symtab entry and its .dynsym copy, most of a C++ library's
// pairs at one address) are demangled once.
template <typename NameOf, typename SameSpelling>
bool KeepFirst(const SymbolTable::Symbol& a, const SymbolTable::Symbol& b, NameOf name_of, SameSpelling same_spelling) {
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
  const std::string a_name = name_of(a);
  const std::string b_name = same_spelling(a, b) ? a_name : name_of(b);
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

uint64_t SymbolTable::FixedUpEnd(uint64_t start, bool other_kind_next, const uint64_t* next_start) {
  if (next_start == nullptr) return RoundUpToPage(start) + kPage;
  return other_kind_next ? RoundUpToPage(start + kPage) : *next_start;
}

const SymbolTable::Symbol* SymbolTable::Find(uint64_t address) const {
  if (!sorted_) return TreeFind(symbols_, root_, address);
  if (!pieces_.empty() && address >= pieces_.front().start) {
    // Inside a stretch that overlapping symbols cover: what perf's tree names there.
    auto piece = std::upper_bound(pieces_.begin(), pieces_.end(), address,
                                  [](uint64_t value, const Piece& p) { return value < p.start; });
    --piece;
    if (piece->symbol != kOutside) return piece->symbol == kNone ? nullptr : &symbols_[piece->symbol];
  }
  // No two symbols overlap here: the last one starting at or before the address is the only
  // one that can cover it (a symbol of size 0 covers its start).
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t value, const Symbol& s) { return value < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return address < it->end || (address == it->end && address == it->start) ? &*it : nullptr;
}

const SymbolTable::Symbol* SymbolTable::TreeFind(const std::vector<Symbol>& nodes, uint32_t root, uint64_t address) {
  // perf's symbols__find: the first symbol on the search path that covers the address.
  uint32_t node = root;
  while (node != kNone) {
    const Symbol& s = nodes[node];
    if (address < s.start) {
      node = s.left;
    } else if (address > s.end || (address == s.end && address != s.start)) {
      node = s.right;
    } else {
      return &s;
    }
  }
  return nullptr;
}

std::string_view SymbolTable::Name(const Symbol& symbol) const {
  const char* name = names_.At(symbol.name);
  return name != nullptr ? std::string_view(name) : std::string_view();
}

void SymbolTable::Builder::Add(uint64_t start, uint64_t size, Binding binding, std::string_view name, bool spelled,
                               bool module) {
  // perf: end = start + len, unchecked; a size that wraps is treated as no size.
  AddEnded(start, size != 0 && start + size > start ? start + size : start, binding, name, spelled, module);
}

void SymbolTable::Builder::AddEnded(uint64_t start, uint64_t end, Binding binding, std::string_view name, bool spelled,
                                    bool module) {
  // No index or name offset left (4 billion symbols, 4 GiB of names: hostile).
  if (symbols_.size() >= kNone - 1 || !names_.Fits(name.size())) return;
  Symbol symbol;
  symbol.start = start;
  symbol.end = end;
  // A name may not hold a NUL (it ends one); a string table's names never do.
  symbol.name = names_.Add(name.substr(0, name.find('\0')));
  symbol.spelled = spelled;
  symbol.module = module;
  symbol.binding = binding;
  symbols_.push_back(symbol);
  ++live_;
}

std::string SymbolTable::Builder::DisplayName(const Symbol& symbol) const {
  const std::string_view raw(names_.At(symbol.name));
  return symbol.spelled ? std::string(raw) : DemangleLikePerf(raw);
}

void SymbolTable::Builder::Sort() {
  if (sorted_ == symbols_.size()) return;
  // Added in the order of their starts (kallsyms without modules, mostly): appended as they are.
  bool in_order = order_.empty() || symbols_[order_.back()].start <= symbols_[sorted_].start;
  for (size_t i = sorted_ + 1; in_order && i < symbols_.size(); ++i) in_order = symbols_[i - 1].start <= symbols_[i].start;
  if (in_order) {
    order_.reserve(order_.size() + symbols_.size() - sorted_);
    for (size_t i = sorted_; i < symbols_.size(); ++i) order_.push_back(static_cast<uint32_t>(i));
    sorted_ = symbols_.size();
    return;
  }
  // By start, then by when added: perf's tree puts an equal start to the right. Sorted as
  // (start, index) pairs, not indexes compared through symbols_ (a cache miss per comparison).
  std::vector<std::pair<uint64_t, uint32_t>> added(symbols_.size() - sorted_);
  for (size_t i = 0; i < added.size(); ++i) {
    const auto symbol = static_cast<uint32_t>(sorted_ + i);
    added[i] = {symbols_[symbol].start, symbol};
  }
  // A radix sort (jitdump/format/radix_sort.h): a large library's symbols come in no order.
  if (!std::is_sorted(added.begin(), added.end())) StableRadixSort(added);
  std::vector<uint32_t> merged;
  merged.reserve(order_.size() + added.size());
  // The symbols already there come before new ones with the same start.
  auto old = order_.begin();
  for (const auto& [start, symbol] : added) {
    while (old != order_.end() && symbols_[*old].start <= start) merged.push_back(*old++);
    merged.push_back(symbol);
  }
  merged.insert(merged.end(), old, order_.end());
  order_ = std::move(merged);
  sorted_ = symbols_.size();
}

void SymbolTable::Builder::FinishPass(bool kallsyms, bool ends_given) {
  Sort();
  if (order_.empty()) return;
  // symbols__fixup_end, in tree order.
  for (size_t i = 0; !ends_given && i + 1 < order_.size(); ++i) {
    Symbol& p = symbols_[order_[i]];
    if (p.end != p.start) continue;
    const Symbol& next = symbols_[order_[i + 1]];
    p.end = FixedUpEnd(p.start, kallsyms && p.module != next.module, &next.start);
  }
  Symbol& last = symbols_[order_.back()];
  if (!ends_given && last.end == last.start) last.end = FixedUpEnd(last.start, false, nullptr);
  // symbols__fixup_duplicate: of neighbours with the same start, the worse one goes.
  const uint32_t added = static_cast<uint32_t>(symbols_.size());
  auto remove = [&](uint32_t symbol) {
    symbols_[symbol].live = false;
    --live_;
    removals_.push_back(Removal{symbol, added});
  };
  size_t kept = 0;
  uint32_t curr = order_[0];
  for (size_t i = 1; i < order_.size(); ++i) {
    const uint32_t next = order_[i];
    if (symbols_[curr].start != symbols_[next].start) {
      order_[kept++] = curr;
      curr = next;
    } else if (KeepFirst(symbols_[curr], symbols_[next], [this](const Symbol& s) { return DisplayName(s); },
                         [this](const Symbol& x, const Symbol& y) {
                           return x.spelled == y.spelled && std::strcmp(names_.At(x.name), names_.At(y.name)) == 0;
                         })) {
      remove(next);
    } else {
      remove(curr);
      curr = next;
    }
  }
  order_[kept++] = curr;
  order_.resize(kept);
}

bool SymbolTable::Builder::Overlapping() const {
  for (size_t i = 0; i + 1 < order_.size(); ++i) {
    const Symbol& a = symbols_[order_[i]];
    const Symbol& b = symbols_[order_[i + 1]];
    if (a.start == b.start || a.end > b.start) return true;
  }
  return false;
}

std::vector<SymbolTable::Piece> SymbolTable::Builder::OverlapPieces() const {
  // Stretches: runs of symbols (in start order) each of which starts before the run's furthest
  // end so far, or where the one before starts. Outside them at most one symbol covers an
  // address, and the tree finds it: its search passes the last symbol that starts at or before
  // the address, which is then the covering one. Inside, the tree's answer changes only at a
  // start or an end of the run's symbols (every comparison it makes is constant between them),
  // so it is asked at each of those and one past it.
  std::vector<Piece> pieces;
  std::vector<uint64_t> bounds;
  for (size_t first = 0; first < order_.size();) {
    uint64_t furthest = symbols_[order_[first]].end;
    size_t next = first + 1;
    while (next < order_.size() && (symbols_[order_[next]].start < furthest ||
                                    symbols_[order_[next]].start == symbols_[order_[next - 1]].start)) {
      furthest = std::max(furthest, symbols_[order_[next]].end);
      ++next;
    }
    if (next - first > 1) {
      bounds.clear();
      for (size_t i = first; i < next; ++i) {
        bounds.push_back(symbols_[order_[i]].start);
        bounds.push_back(symbols_[order_[i]].end);
      }
      std::sort(bounds.begin(), bounds.end());
      bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
      auto answer = [this](uint64_t address) {
        const Symbol* s = TreeFind(symbols_, root_, address);
        return s == nullptr ? kNone : static_cast<uint32_t>(s - symbols_.data());
      };
      // The stretch ends at its furthest end (the last bound). When the next symbol starts
      // there, no symbol of the stretch covers that address (each ends there or before and
      // starts before it): the sorted symbols answer from there on.
      const bool next_starts_there = next < order_.size() && symbols_[order_[next]].start == furthest;
      for (size_t b = 0; b < bounds.size(); ++b) {
        const bool last = b + 1 == bounds.size();
        if (last && next_starts_there) {
          pieces.push_back(Piece{bounds[b], kOutside});
          break;
        }
        pieces.push_back(Piece{bounds[b], answer(bounds[b])});
        const uint64_t after = bounds[b] + 1;
        if (after == 0) break;  // the top of the address space
        if (!last) {
          if (after < bounds[b + 1]) pieces.push_back(Piece{after, answer(after)});
        } else {
          pieces.push_back(Piece{after, kOutside});  // past the stretch
        }
      }
    }
    first = next;
  }
  return pieces;
}

SymbolTable SymbolTable::Builder::Build() {
  Sort();
  SymbolTable table;
  if (!always_tree_) {
    if (Overlapping()) {
      Replay();
      table.pieces_ = OverlapPieces();
    }
    // The live symbols are put in start order in place, over the removed ones (no second copy
    // of a large library's 58,000 symbols at the peak of the report's memory): each symbol's
    // place is its rank in order_, the pieces' indexes are mapped to those places first.
    if (std::is_sorted(order_.begin(), order_.end())) {
      for (size_t k = 0; k < order_.size(); ++k) symbols_[k] = symbols_[order_[k]];  // order_[k] >= k
      for (Piece& piece : table.pieces_) {
        if (piece.symbol == kNone || piece.symbol == kOutside) continue;
        piece.symbol = static_cast<uint32_t>(std::lower_bound(order_.begin(), order_.end(), piece.symbol) - order_.begin());
      }
    } else {
      std::vector<uint32_t> place(symbols_.size(), kNone);  // a removed symbol has none
      for (size_t k = 0; k < order_.size(); ++k) place[order_[k]] = static_cast<uint32_t>(k);
      for (Piece& piece : table.pieces_) {
        if (piece.symbol != kNone && piece.symbol != kOutside) piece.symbol = place[piece.symbol];
      }
      // Each swap puts one live symbol in its place for good; a removed one it brings back stops
      // the walk at that position until the symbol whose place it is arrives there.
      for (size_t i = 0; i < symbols_.size(); ++i) {
        while (place[i] != kNone && place[i] != i) {
          const uint32_t to = place[i];
          std::swap(symbols_[i], symbols_[to]);
          std::swap(place[i], place[to]);
        }
      }
    }
    symbols_.resize(order_.size());
    table.symbols_ = std::move(symbols_);
    table.sorted_ = true;
  } else {
    Replay();
    symbols_.shrink_to_fit();
    table.symbols_ = std::move(symbols_);
    table.root_ = root_;
  }
  table.names_ = std::move(names_);
  table.live_ = live_;
  *this = Builder();
  return table;
}

void SymbolTable::Builder::Replay() {
  root_ = kNone;
  size_t removal = 0;
  for (uint32_t symbol = 0; symbol < symbols_.size(); ++symbol) {
    while (removal < removals_.size() && removals_[removal].added <= symbol) Erase(removals_[removal++].symbol);
    Insert(symbol);
  }
  while (removal < removals_.size()) Erase(removals_[removal++].symbol);
}

// The red-black tree: Linux's lib/rbtree.c algorithm (the textbook one: insertion fix-up by
// recolouring or one or two rotations; removal through the in-order successor, then the
// removal fix-up), which is what decides the tree's shape.

void SymbolTable::Builder::Replace(uint32_t old_node, uint32_t new_node) {
  const uint32_t parent = symbols_[old_node].parent;
  if (parent == kNone) {
    root_ = new_node;
  } else if (symbols_[parent].left == old_node) {
    symbols_[parent].left = new_node;
  } else {
    symbols_[parent].right = new_node;
  }
  if (new_node != kNone) symbols_[new_node].parent = parent;
}

void SymbolTable::Builder::RotateLeft(uint32_t x) {
  const uint32_t y = symbols_[x].right;
  symbols_[x].right = symbols_[y].left;
  if (symbols_[y].left != kNone) symbols_[symbols_[y].left].parent = x;
  Replace(x, y);
  symbols_[y].left = x;
  symbols_[x].parent = y;
}

void SymbolTable::Builder::RotateRight(uint32_t x) {
  const uint32_t y = symbols_[x].left;
  symbols_[x].left = symbols_[y].right;
  if (symbols_[y].right != kNone) symbols_[symbols_[y].right].parent = x;
  Replace(x, y);
  symbols_[y].right = x;
  symbols_[x].parent = y;
}

void SymbolTable::Builder::Insert(uint32_t z) {
  // perf's __symbols__insert: equal starts go to the right.
  uint32_t parent = kNone;
  bool left = false;
  for (uint32_t node = root_; node != kNone;) {
    parent = node;
    left = symbols_[z].start < symbols_[node].start;
    node = left ? symbols_[node].left : symbols_[node].right;
  }
  symbols_[z].parent = parent;
  symbols_[z].red = true;
  if (parent == kNone) {
    root_ = z;
  } else if (left) {
    symbols_[parent].left = z;
  } else {
    symbols_[parent].right = z;
  }
  while (Red(symbols_[z].parent)) {
    uint32_t p = symbols_[z].parent;
    const uint32_t g = symbols_[p].parent;  // a red node is never the root
    if (p == symbols_[g].left) {
      const uint32_t uncle = symbols_[g].right;
      if (Red(uncle)) {
        symbols_[p].red = false;
        symbols_[uncle].red = false;
        symbols_[g].red = true;
        z = g;
        continue;
      }
      if (z == symbols_[p].right) {
        RotateLeft(p);
        z = p;
        p = symbols_[z].parent;
      }
      symbols_[p].red = false;
      symbols_[g].red = true;
      RotateRight(g);
    } else {
      const uint32_t uncle = symbols_[g].left;
      if (Red(uncle)) {
        symbols_[p].red = false;
        symbols_[uncle].red = false;
        symbols_[g].red = true;
        z = g;
        continue;
      }
      if (z == symbols_[p].left) {
        RotateRight(p);
        z = p;
        p = symbols_[z].parent;
      }
      symbols_[p].red = false;
      symbols_[g].red = true;
      RotateLeft(g);
    }
  }
  symbols_[root_].red = false;
}

void SymbolTable::Builder::Erase(uint32_t z) {
  bool removed_red = symbols_[z].red;
  uint32_t x = kNone;         // what takes the removed place
  uint32_t x_parent = kNone;  // its parent (x may be none)
  if (symbols_[z].left == kNone) {
    x = symbols_[z].right;
    x_parent = symbols_[z].parent;
    Replace(z, x);
  } else if (symbols_[z].right == kNone) {
    x = symbols_[z].left;
    x_parent = symbols_[z].parent;
    Replace(z, x);
  } else {
    uint32_t y = symbols_[z].right;  // the successor takes z's place
    while (symbols_[y].left != kNone) y = symbols_[y].left;
    removed_red = symbols_[y].red;
    x = symbols_[y].right;
    if (symbols_[y].parent == z) {
      x_parent = y;
    } else {
      x_parent = symbols_[y].parent;
      Replace(y, x);
      symbols_[y].right = symbols_[z].right;
      symbols_[symbols_[y].right].parent = y;
    }
    Replace(z, y);
    symbols_[y].left = symbols_[z].left;
    symbols_[symbols_[y].left].parent = y;
    symbols_[y].red = symbols_[z].red;
  }
  symbols_[z].left = symbols_[z].right = symbols_[z].parent = kNone;
  if (removed_red) return;
  while (x != root_ && !Red(x)) {
    if (x == symbols_[x_parent].left) {
      uint32_t w = symbols_[x_parent].right;
      if (Red(w)) {
        symbols_[w].red = false;
        symbols_[x_parent].red = true;
        RotateLeft(x_parent);
        w = symbols_[x_parent].right;
      }
      if (!Red(symbols_[w].left) && !Red(symbols_[w].right)) {
        symbols_[w].red = true;
        x = x_parent;
        x_parent = symbols_[x].parent;
        continue;
      }
      if (!Red(symbols_[w].right)) {
        symbols_[symbols_[w].left].red = false;
        symbols_[w].red = true;
        RotateRight(w);
        w = symbols_[x_parent].right;
      }
      symbols_[w].red = symbols_[x_parent].red;
      symbols_[x_parent].red = false;
      symbols_[symbols_[w].right].red = false;
      RotateLeft(x_parent);
      x = root_;
    } else {
      uint32_t w = symbols_[x_parent].left;
      if (Red(w)) {
        symbols_[w].red = false;
        symbols_[x_parent].red = true;
        RotateRight(x_parent);
        w = symbols_[x_parent].left;
      }
      if (!Red(symbols_[w].left) && !Red(symbols_[w].right)) {
        symbols_[w].red = true;
        x = x_parent;
        x_parent = symbols_[x].parent;
        continue;
      }
      if (!Red(symbols_[w].left)) {
        symbols_[symbols_[w].right].red = false;
        symbols_[w].red = true;
        RotateLeft(w);
        w = symbols_[x_parent].left;
      }
      symbols_[w].red = symbols_[x_parent].red;
      symbols_[x_parent].red = false;
      symbols_[symbols_[w].left].red = false;
      RotateRight(x_parent);
      x = root_;
    }
  }
  if (x != kNone) symbols_[x].red = false;
}

}  // namespace jitdump::symbols
