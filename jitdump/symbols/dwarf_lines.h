// Source lines and inline chains of native code from DWARF, through elfutils' libdw (Debian
// libdw-dev): at an address, the functions inlined there, innermost first, each with the file
// and line it was executing (the innermost: the line table's row; an outer one: where it called
// the inner, DW_AT_call_file / DW_AT_call_line), down to the function that owns the code.
// perf 6.1 shows none of this for native frames.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {

struct SourceFrame {
  std::string function;  // demangled like perf (no parameters); "" when DWARF names none
  std::string file;      // as the line table names it; "" when unknown
  uint32_t line = 0;
  bool inlined = false;  // a DW_TAG_inlined_subroutine (the last frame is the owning function)
};

class DwarfLines {
 public:
  // Reads `image`'s DWARF (the ElfImage stays owned here). nullptr when it has none libdw reads,
  // or when its debug sections would take more than `max_bytes` in memory.
  static std::unique_ptr<DwarfLines> Open(std::unique_ptr<ElfImage> image, uint64_t max_bytes, std::string* error);
  ~DwarfLines();
  DwarfLines(const DwarfLines&) = delete;
  DwarfLines& operator=(const DwarfLines&) = delete;

  // The chain at `vaddr` (the ELF's address, not a file offset), innermost first; false when
  // no compilation unit covers it.
  bool Chain(uint64_t vaddr, std::vector<SourceFrame>* frames);

  // Off: every chain and name through libdw's own walks of the unit, and an address
  // .debug_aranges does not hold searched in every unit's ranges (what the indexes and the
  // names of C functions, never qualified, must equal; tests).
  void set_scope_index(bool on) { scope_index_ = on; }
  // How many DIEs the index of scopes' children may list, all levels (tests: a small one).
  void set_max_scope_children(size_t n) { max_scope_children_ = n; }

  // What the open DWARF holds in memory (the debug sections libdw read, decompressed).
  uint64_t bytes() const { return bytes_; }

 private:
  DwarfLines() = default;
  bool FindUnit(uint64_t vaddr, Dwarf_Die* cu);
  // The name of a function's DIE, once per DIE: qualifying a name walks its unit from the start
  // (dwarf_getscopes_die), and the same functions come back in address after address.
  const std::string& NameOf(Dwarf_Die* die);
  // The DIEs that cover `vaddr`, outermost first, found the way dwarf_getscopes finds them (the
  // first covering child at each level, into scopes only) but from the unit's covering
  // children indexed once, not by a walk of the whole unit per address. False when the unit
  // imports others (DW_TAG_imported_unit): libdw's own walk is used then.
  bool CoveringPath(Dwarf_Die* cu, uint64_t vaddr, std::vector<Dwarf_Die>* path);
  // A DIE's children in DIE order, each with its offset, for the walk down to a definition;
  // built for a DIE the first time a walk passes it. The scopes around a definition are found
  // going down from its unit through the children whose subtrees hold it, where
  // dwarf_getscopes_die walks the unit from its start for each definition, and a walk of every
  // namespace and class of a C++ unit (tens of thousands of DIEs) sees mostly ones no
  // definition named is in.
  struct ScopeChild {
    Dwarf_Die die;
    Dwarf_Off offset = 0;
  };
  // The children of `die`; nullptr when listing them would take the index past
  // max_scope_children_ (a file of millions of DIEs side by side: memory stays bounded, and the
  // names come from libdw's walk instead).
  const std::vector<ScopeChild>* ScopeChildren(Dwarf_Die* die);
  // ScopePrefix (what dwarf_getscopes_die's walk gives) from the children's index.
  std::string IndexedScopePrefix(Dwarf_Die* definition);
  // The innermost inline chain's DIEs through libdw's walks (dwarf_getscopes, then
  // dwarf_getscopes_die): innermost first.
  static void LibdwScopes(Dwarf_Die* cu, uint64_t vaddr, std::vector<Dwarf_Die>* scopes);

  std::unique_ptr<ElfImage> image_;
  // NUL-terminated copies of debug sections that were not (dwarf_lines.cc), which libdw reads.
  std::vector<std::unique_ptr<char[]>> terminated_sections_;
  Dwarf* dwarf_ = nullptr;
  uint64_t bytes_ = 0;
  // Compilation units by address range, for files without .debug_aranges (built on first need).
  struct UnitRange {
    uint64_t start = 0;
    uint64_t end = 0;
    Dwarf_Off offset = 0;
  };
  std::vector<UnitRange> unit_ranges_;
  bool unit_ranges_built_ = false;
  bool have_aranges_ = false;
  std::vector<Dwarf_Off> aranged_units_;  // the unit DIEs .debug_aranges names, sorted
  std::unordered_map<Dwarf_Off, std::string> names_;     // by DIE offset
  std::unordered_map<Dwarf_Off, std::string> prefixes_;  // by definition DIE offset
  // A unit's children that have address ranges, in the unit's order, with their ranges.
  struct TopScope {
    Dwarf_Off offset = 0;
    uint32_t first_range = 0;
    uint32_t ranges = 0;
  };
  struct UnitScopes {
    bool imports = false;  // a child is DW_TAG_imported_unit
    std::vector<TopScope> scopes;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
  };
  std::unordered_map<Dwarf_Off, UnitScopes> unit_scopes_;  // by unit DIE offset
  std::unordered_map<Dwarf_Off, std::vector<ScopeChild>> scope_children_;  // by parent DIE offset
  size_t scope_children_listed_ = 0;  // in scope_children_, all levels
  size_t max_scope_children_ = size_t{1} << 20;
  std::vector<Dwarf_Die> path_;
  bool scope_index_ = true;
  // MayHaveRanges by the DIE's abbreviation, which alone decides it (libdw's abbreviations live
  // as long as the Dwarf): the four attribute searches once per abbreviation, not per DIE.
  bool MayHaveRangesByAbbrev(Dwarf_Die* die);
  std::unordered_map<const void*, bool> ranges_by_abbrev_;
};

}  // namespace jitdump::symbols
