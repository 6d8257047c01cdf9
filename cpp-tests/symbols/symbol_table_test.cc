// SymbolTable: perf 6.1's rules for what a symbol covers (tools/perf/util/symbol.c:
// symbols__fixup_end, symbols__fixup_duplicate, choose_best_symbol, symbols__find), and the
// demangled spelling perf prints. The differential test (scripts/tests/perf/
// test_native_symbols.py) checks the same against perf itself on real files.
#include "jitdump/symbols/symbol_table.h"

#define HAVE_DECL_BASENAME 1  // glibc's string.h declares it; libiberty.h would again
#include <gelf.h>
#include <gtest/gtest.h>
#include <libiberty/demangle.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "jitdump/symbols/demangle.h"
#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {
namespace {

std::string NameAt(const SymbolTable& table, uint64_t address) {
  const SymbolTable::Symbol* s = table.Find(address);
  return s != nullptr ? std::string(table.Name(*s)) : "(none)";
}

// The tests' random numbers: a 64-bit linear congruential generator, the same sequence on every
// platform; next(bound) is in [0, bound).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : seed_(seed) {}
  uint64_t operator()(uint64_t bound) {
    seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
    return (seed_ >> 33) % bound;
  }

 private:
  uint64_t seed_;
};

TEST(SymbolTableTest, SizedSymbolsCoverTheirRangeOnly) {
  SymbolTable::Builder b;
  b.Add(0x1000, 0x10, Binding::kGlobal, "a");
  b.Add(0x1020, 0x10, Binding::kGlobal, "b");
  b.FinishPass();
  const SymbolTable t = b.Build();
  EXPECT_EQ(NameAt(t, 0xfff), "(none)");
  EXPECT_EQ(NameAt(t, 0x1000), "a");
  EXPECT_EQ(NameAt(t, 0x100f), "a");
  EXPECT_EQ(NameAt(t, 0x1010), "(none)");  // the gap between them is nobody's
  EXPECT_EQ(NameAt(t, 0x1020), "b");
  EXPECT_EQ(NameAt(t, 0x1030), "(none)");  // end is exclusive
}

TEST(SymbolTableTest, ZeroSizeSymbolsEndWhereTheNextStarts) {
  SymbolTable::Builder b;
  b.Add(0x2000, 0, Binding::kLocal, "asm_entry");
  b.Add(0x2100, 0x10, Binding::kGlobal, "next");
  b.Add(0x3010, 0, Binding::kLocal, "last");
  b.FinishPass();
  const SymbolTable t = b.Build();
  EXPECT_EQ(NameAt(t, 0x20ff), "asm_entry");
  EXPECT_EQ(NameAt(t, 0x2100), "next");
  // The last one ends a page after the page boundary at or after its start.
  EXPECT_EQ(NameAt(t, 0x4fff), "last");
  EXPECT_EQ(NameAt(t, 0x5000), "(none)");
}

TEST(SymbolTableTest, OfSymbolsStartingTogetherPerfKeepsOne) {
  SymbolTable::Builder b;
  b.Add(0x100, 0, Binding::kGlobal, "unsized");      // a sized one wins over it
  b.Add(0x100, 0x10, Binding::kLocal, "sized");
  b.Add(0x200, 0x10, Binding::kWeak, "weak_one");     // non-weak wins
  b.Add(0x200, 0x10, Binding::kLocal, "local_one");
  b.Add(0x300, 0x10, Binding::kLocal, "local_two");   // global wins
  b.Add(0x300, 0x10, Binding::kGlobal, "global_two");
  b.Add(0x400, 0x10, Binding::kGlobal, "__fewer");    // fewer leading underscores win
  b.Add(0x400, 0x10, Binding::kGlobal, "___more");
  b.Add(0x500, 0x10, Binding::kGlobal, "short");      // then the longer name
  b.Add(0x500, 0x10, Binding::kGlobal, "longer_name");
  b.Add(0x600, 0x10, Binding::kGlobal, "first");      // then the first added
  b.Add(0x600, 0x10, Binding::kGlobal, "secnd");
  b.Add(0x700, 0x10, Binding::kGlobal, "SyS_read");   // the kernel's SyS aliases lose
  b.Add(0x700, 0x10, Binding::kGlobal, "sys_read");
  b.FinishPass();
  const SymbolTable t = b.Build();
  EXPECT_EQ(NameAt(t, 0x100), "sized");
  EXPECT_EQ(NameAt(t, 0x200), "local_one");
  EXPECT_EQ(NameAt(t, 0x300), "global_two");
  EXPECT_EQ(NameAt(t, 0x400), "__fewer");
  EXPECT_EQ(NameAt(t, 0x500), "longer_name");
  EXPECT_EQ(NameAt(t, 0x600), "first");
  EXPECT_EQ(NameAt(t, 0x700), "sys_read");
  EXPECT_EQ(t.size(), 7u);
}

TEST(SymbolTableTest, DuplicatesCompareDemangledNames) {
  // perf compares the names it stores, which are demangled: "_ZN1A1fEv" is "A::f" (4), shorter
  // than "a_longer" (8) although its mangled name is longer.
  SymbolTable::Builder b;
  b.Add(0x100, 0x10, Binding::kGlobal, "_ZN1A1fEv");
  b.Add(0x100, 0x10, Binding::kGlobal, "a_longer");
  b.FinishPass();
  EXPECT_EQ(NameAt(b.Build(), 0x100), "a_longer");
}

TEST(SymbolTableTest, ALaterPassFixesOnlyWhatIsStillUnsized) {
  // perf reads .symtab, fixes up, then .dynsym, fixes up again: an unsized .dynsym symbol ends
  // at the next symbol of either table.
  SymbolTable::Builder b;
  b.Add(0x100, 0x10, Binding::kGlobal, "f");
  b.FinishPass();
  b.Add(0x80, 0, Binding::kGlobal, "g");
  b.FinishPass();
  const SymbolTable t = b.Build();
  EXPECT_EQ(NameAt(t, 0xff), "g");
  EXPECT_EQ(NameAt(t, 0x100), "f");
}

TEST(SymbolTableTest, OverlapsAreResolvedAsPerfsTreeResolvesThem) {
  // perf adds PLT symbols after its fix-ups: an unsized _init before .plt already covers the
  // PLT entries, and which of two overlapping symbols perf names is the one its tree search
  // meets first. Here _init is the root and the PLT entry its child: "_init" (perf script names
  // such samples so; the differential test checks real files against perf).
  SymbolTable::Builder b;
  b.Add(0x1000, 0, Binding::kGlobal, "_init");
  b.FinishPass();  // _init: [0x1000, 0x3000)
  b.Add(0x1020, 0x10, Binding::kGlobal, "memcpy@plt", /*spelled=*/true);
  const SymbolTable t = b.Build();
  EXPECT_EQ(NameAt(t, 0x1025), "_init");
  // Three symbols in ascending order rotate the middle one to the root, above "outer": the
  // search meets the PLT entries first, and past them goes right, never reaching "outer"
  // (perf names nothing there although "outer" covers it).
  SymbolTable::Builder c;
  c.Add(0x1000, 0x100, Binding::kGlobal, "outer");
  c.FinishPass();
  c.Add(0x1020, 0x10, Binding::kGlobal, "a@plt", true);
  c.Add(0x1030, 0x10, Binding::kGlobal, "b@plt", true);
  const SymbolTable u = c.Build();
  EXPECT_EQ(NameAt(u, 0x1025), "a@plt");
  EXPECT_EQ(NameAt(u, 0x1035), "b@plt");
  EXPECT_EQ(NameAt(u, 0x1045), "(none)");
  EXPECT_EQ(NameAt(u, 0x1015), "outer");
}

TEST(SymbolTableTest, RemovalsKeepTheTreeSearchable) {
  // Many duplicates removed by the fix-up (rebalancing after each removal): every address
  // still finds its symbol.
  SymbolTable::Builder b;
  for (uint64_t i = 0; i < 1000; ++i) {
    b.Add(0x10000 + i * 0x10, 0x10, Binding::kLocal, "local_" + std::to_string(i));
    if (i % 3 == 0) b.Add(0x10000 + i * 0x10, 0x10, Binding::kGlobal, "global_" + std::to_string(i));
  }
  b.FinishPass();
  const SymbolTable t = b.Build();
  EXPECT_EQ(t.size(), 1000u);
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(NameAt(t, 0x10000 + i * 0x10 + 5), (i % 3 == 0 ? "global_" : "local_") + std::to_string(i));
  }
}

TEST(SymbolTableTest, KallsymsPassRoundsBetweenKernelAndModules) {
  SymbolTable::Builder b;
  b.Add(0xffffffff81000000, 0, Binding::kGlobal, "_text", true);
  b.Add(0xffffffff81000100, 0, Binding::kGlobal, "last_kernel", true);
  b.Add(0xffffffffc0000000, 0, Binding::kLocal, "module_fn", true, /*module=*/true);
  b.FinishPass(/*kallsyms=*/true);
  const SymbolTable t = b.Build();
  // The last kernel symbol does not run into the modules a gigabyte later.
  EXPECT_EQ(NameAt(t, 0xffffffff81001fff), "last_kernel");
  EXPECT_EQ(NameAt(t, 0xffffffff81002000), "(none)");
  EXPECT_EQ(NameAt(t, 0xffffffffc0000000), "module_fn");
}

// Tables built as a sorted array, with the tree's answers kept where symbols overlap, must name
// every address as perf's tree alone names it: random tables of sized and unsized symbols in
// several passes (duplicates, removals), some with PLT-like symbols added after the last pass
// that overlap what is there.
TEST(SymbolTableTest, SortedTablesFindWhatPerfsTreeFinds) {
  Lcg next(12345);
  size_t sorted_tables = 0;
  size_t tree_tables = 0;
  for (int round = 0; round < 200; ++round) {
    SymbolTable::Builder auto_built;
    SymbolTable::Builder tree_built;
    tree_built.set_always_tree(true);
    const int passes = 1 + static_cast<int>(next(3));
    const bool overlapping = round % 4 == 3;
    for (int pass = 0; pass < passes; ++pass) {
      const uint64_t count = 1 + next(60);
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t start = 0x1000 + next(64) * 0x10;
        // Sized symbols never reach the next slot (unless the table is to overlap).
        const uint64_t size = next(3) == 0 ? 0 : 1 + next(overlapping ? 0x40 : 0x10);
        const Binding binding = static_cast<Binding>(next(3));
        const std::string name = std::string(next(3), '_') + "f" + std::to_string(next(1000));
        auto_built.Add(start, size, binding, name);
        tree_built.Add(start, size, binding, name);
      }
      auto_built.FinishPass();
      tree_built.FinishPass();
    }
    if (overlapping) {
      for (uint64_t i = 0; i < 5; ++i) {
        const uint64_t start = 0x1000 + next(0x400);
        auto_built.Add(start, 0x10, Binding::kGlobal, "plt" + std::to_string(i), true);
        tree_built.Add(start, 0x10, Binding::kGlobal, "plt" + std::to_string(i), true);
      }
    }
    const SymbolTable a = auto_built.Build();
    const SymbolTable t = tree_built.Build();
    ASSERT_TRUE(t.is_tree());
    ASSERT_FALSE(a.is_tree());
    (a.has_overlaps() ? tree_tables : sorted_tables) += 1;
    EXPECT_EQ(a.size(), t.size());
    for (uint64_t address = 0xf00; address < 0x4000; ++address) {
      ASSERT_EQ(NameAt(a, address), NameAt(t, address)) << "round " << round << " address " << address;
    }
  }
  // Both kinds were exercised (tables with overlaps and without).
  EXPECT_GT(sorted_tables, 50u);
  EXPECT_GT(tree_tables, 20u);
}

// Tables whose symbols come in start order (one pass sorted, then PLT-like symbols after it that
// overlap what is there) are put in order without moving a symbol: the tree's answers kept for
// the overlapping stretches must still name the symbols they named in perf's tree.
TEST(SymbolTableTest, TablesAddedInStartOrderWithOverlapsFindWhatPerfsTreeFinds) {
  Lcg next(4242);
  size_t with_overlaps = 0;
  for (int round = 0; round < 100; ++round) {
    SymbolTable::Builder auto_built;
    SymbolTable::Builder tree_built;
    tree_built.set_always_tree(true);
    std::vector<uint64_t> starts(1 + next(80));
    for (uint64_t& start : starts) start = 0x1000 + next(64) * 0x10;
    std::sort(starts.begin(), starts.end());
    for (const uint64_t start : starts) {
      const uint64_t size = next(3) == 0 ? 0 : 1 + next(0x40);  // some reach past the next start
      const Binding binding = static_cast<Binding>(next(3));
      const std::string name = "f" + std::to_string(next(1000));
      auto_built.Add(start, size, binding, name);
      tree_built.Add(start, size, binding, name);
    }
    auto_built.FinishPass();
    tree_built.FinishPass();
    uint64_t plt = starts.back();
    for (uint64_t i = 0; i < 4; ++i) {
      plt += next(0x20);
      auto_built.Add(plt, 0x10, Binding::kGlobal, "plt" + std::to_string(i), true);
      tree_built.Add(plt, 0x10, Binding::kGlobal, "plt" + std::to_string(i), true);
    }
    const SymbolTable a = auto_built.Build();
    const SymbolTable t = tree_built.Build();
    ASSERT_FALSE(a.is_tree());
    with_overlaps += a.has_overlaps();
    EXPECT_EQ(a.size(), t.size());
    for (uint64_t address = 0xf00; address < 0x2000; ++address) {
      ASSERT_EQ(NameAt(a, address), NameAt(t, address)) << "round " << round << " address " << address;
    }
  }
  EXPECT_GT(with_overlaps, 50u);
}

// Names are kept in chunks (name_chunks.h): thousands of them over many chunks, and names longer
// than a chunk, each come back whole from its symbol.
TEST(SymbolTableTest, NamesOfEveryLengthAcrossChunks) {
  SymbolTable::Builder builder;
  std::vector<std::string> names;
  for (size_t i = 0; i < 20000; ++i) {
    std::string name = "fn" + std::to_string(i) + std::string(i % 97, static_cast<char>('a' + i % 26));
    if (i == 7000) name = std::string(300 << 10, 'L');   // longer than a chunk
    if (i == 7001) name = std::string(700 << 10, 'M');   // several chunks' worth
    if (i == 7002) name.clear();                          // an empty name still has its place
    names.push_back(name);
    builder.Add(0x10000 + i * 0x100, 0x80, Binding::kGlobal, name);
  }
  builder.FinishPass();
  const SymbolTable table = builder.Build();
  ASSERT_EQ(table.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const SymbolTable::Symbol* s = table.Find(0x10000 + i * 0x100 + 0x40);
    ASSERT_NE(s, nullptr) << i;
    ASSERT_EQ(table.Name(*s), names[i]) << i;
  }
}

// A pass of thousands of symbols in no order, spread over a kernel's range of addresses (the
// sort by start takes several passes of its digits): each address is named by the symbol covering
// it, and of two symbols starting together that nothing else tells apart (size, binding, name's
// length) the one added first stays, whichever of the two that was.
TEST(SymbolTableTest, ManySymbolsInNoOrderKeepTheFirstOfEqualStarts) {
  Lcg next(777);
  constexpr uint64_t kBase = 0xffffffff81000000ull;
  constexpr size_t kSymbols = 5000;
  std::vector<uint64_t> starts;
  // A page apart, some half a page into theirs: 20 MB, three passes of the radix sort's digits.
  for (size_t i = 0; i < kSymbols; ++i) starts.push_back(kBase + i * 0x1000 + next(2) * 0x800);
  for (size_t i = kSymbols - 1; i > 0; --i) std::swap(starts[i], starts[next(i + 1)]);  // added in no order
  SymbolTable::Builder builder;
  std::vector<std::string> expected(kSymbols);
  for (size_t i = 0; i < kSymbols; ++i) {
    char own[16], twin[16];
    std::snprintf(own, sizeof own, "own%05zu", i);
    std::snprintf(twin, sizeof twin, "twn%05zu", i);
    const bool twinned = next(4) == 0;
    const bool twin_first = twinned && next(2) == 0;
    if (twin_first) builder.Add(starts[i], 0x10, Binding::kGlobal, twin);
    builder.Add(starts[i], 0x10, Binding::kGlobal, own);
    if (twinned && !twin_first) builder.Add(starts[i], 0x10, Binding::kGlobal, twin);
    expected[i] = twin_first ? twin : own;
  }
  builder.FinishPass();
  const SymbolTable table = builder.Build();
  ASSERT_EQ(table.size(), kSymbols);
  for (size_t i = 0; i < kSymbols; ++i) {
    ASSERT_EQ(NameAt(table, starts[i]), expected[i]) << i;
    ASSERT_EQ(NameAt(table, starts[i] + 0xf), expected[i]) << i;
    ASSERT_EQ(NameAt(table, starts[i] + 0x10), "(none)") << i;
  }
}

TEST(DemangleTest, SpelledAsPerf61PrintsThem) {
  // perf 6.1 demangles without DMGL_PARAMS unless -v: no argument lists.
  EXPECT_EQ(DemangleLikePerf("_ZN10JavaThread3runEv"), "JavaThread::run");
  EXPECT_EQ(DemangleLikePerf("_ZNKSt6vectorIiSaIiEE4sizeEv"), "std::vector<int, std::allocator<int> >::size");
  EXPECT_EQ(DemangleLikePerf("_ZN12_GLOBAL__N_11fEv"), "(anonymous namespace)::f");
  EXPECT_EQ(DemangleLikePerf("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");  // Rust: no hash
  EXPECT_EQ(DemangleLikePerf("memcpy"), "memcpy");
  EXPECT_EQ(DemangleLikePerf("_Znot_mangled"), "_Znot_mangled");
  EXPECT_EQ(DemangleLikePerf(""), "");
}

// libiberty's automatic style on its own, which DemangleLikePerf asks only when it may answer.
std::string AutomaticStyle(const std::string& name) {
  std::unique_ptr<char, decltype(&std::free)> demangled(cplus_demangle(name.c_str(), DMGL_NO_OPTS), &std::free);
  return demangled != nullptr ? std::string(demangled.get()) : name;
}

TEST(DemangleTest, EveryNameAsTheAutomaticStyleSpellsIt) {
  // DemangleLikePerf skips the demangler for names no style of the automatic one takes and the
  // Rust demangler for "_Z" names that cannot be Rust: the answers must be the library's own.
  std::vector<std::string> names = {
      "_ZN4core3fmt5write17h0123456789abcdefE",  // legacy Rust
      "_ZN4core3fmt5write17h0123456789abcdefE.llvm.123",
      "_ZN3std2rt10lang_start17h9f1d2c3b4a5e6f70E",
      "_ZN4core3fmt5write17hXYZ",  // "17h" but no hash: C++'s answer, if any
      "_RNvCs1234_7mycrate3foo",   // Rust v0
      "_RNvNtCs1234_7mycrate6module3bar",
      "_GLOBAL__I_abc",  // the C++ ABI's global constructors
      "_GLOBAL__sub_I_main",
      "_Z3foov.cold",
      "_Z3foov@plt",
      "__Z3foov",
      "_D3foo3barFZv",  // D: not in the automatic style
      "ada__text_io__put_line",  // Ada: neither
      "_",
      "_Z",
      "_R",
      "_ZN",
  };
  // And every symbol of this test's own executable (gtest's C++ names among them).
  std::string error;
  std::unique_ptr<ElfImage> self = ElfImage::OpenPath("/proc/self/exe", &error);
  ASSERT_NE(self, nullptr) << error;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(self->elf(), scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data != nullptr && shdr.sh_entsize != 0 && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      if (const char* name = elf_strptr(self->elf(), shdr.sh_link, sym.st_name); name != nullptr && *name != '\0') {
        names.push_back(name);
      }
    }
  }
  ASSERT_GT(names.size(), 1000u);
  size_t demangled = 0;
  for (const std::string& name : names) {
    const std::string expected = AutomaticStyle(name);
    demangled += expected != name;
    ASSERT_EQ(DemangleLikePerf(name), expected) << name;
  }
  EXPECT_GT(demangled, 500u);  // the executable's C++ names did go through the C++ demangler
}

}  // namespace
}  // namespace jitdump::symbols
