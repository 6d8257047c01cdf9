// DwarfLines finds an address's inline chain from its unit's covering children, indexed once per
// unit, instead of libdw's two walks of the whole unit per address (dwarf_getscopes, then
// dwarf_getscopes_die). The chains must be the same: checked at every address of the fixture's
// code (its inlined calls) and at addresses through all of libc's code with libc6-dbg's DWARF
// (thousands of units, assembly units without functions, clones, inlined chains of glibc's macros).
#include "jitdump/symbols/dwarf_lines.h"

#include <gelf.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {
namespace {

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  char digits[3];
  for (uint8_t b : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", b);
    out += digits;
  }
  return out;
}

std::string Text(const std::vector<SourceFrame>& frames) {
  std::string out;
  for (const SourceFrame& f : frames) {
    out += f.function + " " + f.file + ":" + std::to_string(f.line) + (f.inlined ? " (inlined)" : "") + "\n";
  }
  return out;
}

// The code range of the ELF's .text.
std::pair<uint64_t, uint64_t> TextRange(const std::string& path) {
  std::string error;
  std::unique_ptr<ElfImage> image = ElfImage::OpenPath(path, &error);
  if (!image) return {0, 0};
  GElf_Shdr shdr;
  if (image->FindSection(".text", &shdr) == nullptr) return {0, 0};
  return {shdr.sh_addr, shdr.sh_addr + shdr.sh_size};
}

std::unique_ptr<DwarfLines> Open(const std::string& path, bool index) {
  std::string error;
  std::unique_ptr<ElfImage> image = ElfImage::OpenPath(path, &error);
  if (!image) return nullptr;
  std::unique_ptr<DwarfLines> lines = DwarfLines::Open(std::move(image), uint64_t{1} << 32, &error);
  if (lines) lines->set_scope_index(index);
  return lines;
}

// Compares the chains at `step`-byte intervals of [start, end); returns how many addresses had
// an inline chain of more than one frame (so that the comparison is known to cover some).
// `max_children`: the indexed side's limit on the DIEs its index of scopes lists (0: its own).
size_t ExpectSameChains(const std::string& debug_file, uint64_t start, uint64_t end, uint64_t step,
                        size_t max_children = 0) {
  std::unique_ptr<DwarfLines> indexed = Open(debug_file, true);
  std::unique_ptr<DwarfLines> walked = Open(debug_file, false);
  EXPECT_TRUE(indexed && walked) << debug_file;
  if (!indexed || !walked) return 0;
  if (max_children != 0) indexed->set_max_scope_children(max_children);
  size_t inlined = 0, differ = 0;
  std::vector<SourceFrame> a, b;
  for (uint64_t vaddr = start; vaddr < end; vaddr += step) {
    const bool found_a = indexed->Chain(vaddr, &a);
    const bool found_b = walked->Chain(vaddr, &b);
    const std::string ta = Text(a), tb = Text(b);
    if (found_a != found_b || ta != tb) {
      if (++differ <= 5) ADD_FAILURE() << debug_file << " at 0x" << std::hex << vaddr << ":\nindexed\n" << ta << "libdw\n" << tb;
    }
    inlined += a.size() > 1;
  }
  EXPECT_EQ(differ, 0u);
  return inlined;
}

TEST(DwarfLinesTest, IndexedChainsEqualLibdwsWalksOnTheFixture) {
  const auto [start, end] = TextRange(SYMFIX_LIB);
  ASSERT_LT(start, end) << SYMFIX_LIB;
  EXPECT_GT(ExpectSameChains(SYMFIX_LIB, start, end, 1), 0u) << "no inlined call in the fixture's code";
}

TEST(DwarfLinesTest, IndexedChainsEqualLibdwsWalksOnLibc) {
  std::string error;
  std::unique_ptr<ElfImage> libc = ElfImage::OpenPath("/lib/x86_64-linux-gnu/libc.so.6", &error);
  ASSERT_TRUE(libc) << error;
  const std::string id = Hex(libc->build_id());
  ASSERT_GT(id.size(), 2u);
  const std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  ASSERT_EQ(access(debug.c_str(), R_OK), 0) << debug << " missing: install libc6-dbg (scripts/setup)";
  const auto [start, end] = TextRange("/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_LT(start, end);
  // About 25,000 addresses across every unit of libc's code.
  EXPECT_GT(ExpectSameChains(debug, start, end, 61), 1000u);
}

// C++ names: the namespaces, classes and structures around each function's definition come from
// a walk down its unit through the children that hold it (DwarfLines' children index) where libdw
// walks the unit from its start for each definition.
// This test's own code (GoogleTest's classes and templates, std's nested namespaces, this file's
// anonymous namespace) must be named the same both ways.
TEST(DwarfLinesTest, IndexedNamesEqualLibdwsWalksOnThisTestsCxxCode) {
  const std::string self = "/proc/self/exe";
  const auto [start, end] = TextRange(self);
  ASSERT_LT(start, end) << self;
  std::unique_ptr<DwarfLines> lines = Open(self, true);
  ASSERT_TRUE(lines) << self << " has no DWARF: the tests are built with -g (meson's debugoptimized)";
  // About 8,000 addresses across its code.
  EXPECT_GT(ExpectSameChains(self, start, end, std::max<uint64_t>(1, (end - start) / 8000)), 100u);
}

// An index of scopes' children that fills up (a file of millions of DIEs side by side) leaves the
// names it cannot find to libdw's walk: the same names, whatever the limit.
TEST(DwarfLinesTest, AFullScopeIndexGivesTheSameNames) {
  const std::string self = "/proc/self/exe";
  const auto [start, end] = TextRange(self);
  ASSERT_LT(start, end) << self;
  // A few thousand DIEs: the first units' top levels fit, later ones do not.
  EXPECT_GT(ExpectSameChains(self, start, end, std::max<uint64_t>(1, (end - start) / 2000), 5000), 20u);
}

}  // namespace
}  // namespace jitdump::symbols
