#include "jitdump/symbols/dwarf_lines.h"

#include <dwarf.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "jitdump/symbols/compressed_section.h"
#include "jitdump/symbols/demangle.h"

namespace jitdump::symbols {
namespace {

// Compilation unit ranges kept for a file without .debug_aranges; beyond, lookups in the rest
// find no unit.
constexpr size_t kMaxUnitRanges = 1u << 20;
// Scopes of one address deeper than this are cut (a real chain is a few dozen).
constexpr int kMaxScopes = 256;

// Debug sections no lookup here reads: location lists, macros, call frames and the name
// indexes. dwarf_begin_elf (elfutils 0.188) inflates every compressed debug section it knows
// when the Dwarf opens, read or not, and libc6-dbg's .debug_loclists alone is a third of what
// it would inflate; the scope, range, line and name walks of this file never touch these.
bool Unread(std::string_view name) {
  if (name.starts_with(".zdebug_")) {
    name.remove_prefix(8);
  } else if (name.starts_with(".debug_")) {
    name.remove_prefix(7);
  } else {
    return false;
  }
  static constexpr std::string_view kUnread[] = {"loc",   "loclists", "macro",    "macinfo",
                                                  "frame", "pubnames", "pubtypes", "gnu_pubnames",
                                                  "gnu_pubtypes"};
  for (std::string_view unread : kUnread) {
    if (name == unread) return true;
  }
  return false;
}

// Hides the debug sections no lookup reads from libdw: an SHT_NOBITS section is one
// dwarf_begin_elf skips (it holds no bytes) instead of inflating. Only the in-memory section
// header changes (libelf's copy: the image is read, never written back), and the image is this
// DWARF's own.
void HideUnreadSections(const ElfImage& image) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(image.elf(), scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    if (!Unread(image.SectionName(shdr))) continue;
    shdr.sh_type = SHT_NOBITS;
    gelf_update_shdr(scn, &shdr);
  }
}

// What libdw will hold of `image`'s debug sections: their sizes, decompressed (those it reads).
uint64_t DebugBytes(const ElfImage& image) {
  uint64_t total = 0;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(image.elf(), scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const std::string_view name = image.SectionName(shdr);
    if (!name.starts_with(".debug_") && !name.starts_with(".zdebug_")) continue;
    uint64_t size = shdr.sh_size;
    if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
      GElf_Chdr chdr;
      if (gelf_getchdr(scn, &chdr) != nullptr) size = chdr.ch_size;
    }
    total += size;
  }
  return total;
}

// Inflates the compressed debug sections libdw will read (with libdeflate where it can:
// compressed_section.h), and makes every one end in NUL. libdw reads the strings of .debug_str,
// .debug_line_str and .debug_line's headers with strlen (elfutils 0.188's dwarf_getsrclines
// among them), so a file whose string runs to the end of its section makes libdw read past the
// section's buffer (the symbols fuzzer found it). An inflated section gets zeros past its size
// in its own buffer; any other debug section that does not end in NUL gets a copy that does,
// where libdw's next strlen stops. The buffers live as long as the DWARF.
std::vector<std::unique_ptr<char[]>> TerminateDebugSections(const ElfImage& image) {
  constexpr size_t kPadding = 16;
  std::vector<std::unique_ptr<char[]>> copies;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(image.elf(), scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    const std::string_view name = image.SectionName(shdr);
    if (name.starts_with(".zdebug_")) {
      if (elf_compress_gnu(scn, 0, 0) < 0) continue;
    } else if (!name.starts_with(".debug_")) {
      continue;
    } else if ((shdr.sh_flags & SHF_COMPRESSED) != 0) {
      if (std::unique_ptr<char[]> inflated = InflateCompressedSection(image.elf(), scn, kPadding)) {
        copies.push_back(std::move(inflated));
        continue;
      }
      if (elf_compress(scn, 0, 0) < 0) continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);  // the one libdw will read: libelf keeps it
    if (data == nullptr || data->d_buf == nullptr || data->d_size == 0) continue;
    const char* bytes = static_cast<const char*>(data->d_buf);
    if (bytes[data->d_size - 1] == '\0') continue;
    std::unique_ptr<char[]> copy(new char[data->d_size + kPadding]());
    std::copy(bytes, bytes + data->d_size, copy.get());
    data->d_buf = copy.get();
    copies.push_back(std::move(copy));
  }
  return copies;
}

bool IsFunction(int tag) {
  return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram || tag == DW_TAG_entry_point;
}

// The tags libdw's scope walk enters (libdw_visit_scopes.c, may_have_scopes).
bool MayHaveScopes(int tag) {
  switch (tag) {
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
      return true;
    default:
      return false;
  }
}

// Whether dwarf_ranges may find a range for `die` (not a unit's DIE): libdw reads
// DW_AT_low_pc and DW_AT_high_pc through an abstract origin or a specification too
// (dwarf_attr_integrate), DW_AT_ranges from the DIE itself. This asks the DIE's abbreviation
// only, where dwarf_ranges decodes its attributes; most of a unit's children (types,
// variables, parameters) have none of these.
bool MayHaveRanges(Dwarf_Die* die) {
  return dwarf_hasattr(die, DW_AT_low_pc) > 0 || dwarf_hasattr(die, DW_AT_ranges) > 0 ||
         dwarf_hasattr(die, DW_AT_abstract_origin) > 0 || dwarf_hasattr(die, DW_AT_specification) > 0;
}

// The DIE that defines a function: an inlined or out-of-line instance's abstract origin, a
// definition's declaration (DW_AT_specification), as far as they go.
Dwarf_Die Definition(Dwarf_Die* die) {
  Dwarf_Die current = *die;
  for (int hops = 0; hops < 8; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    if (dwarf_attr(&current, DW_AT_abstract_origin, &attr) == nullptr &&
        dwarf_attr(&current, DW_AT_specification, &attr) == nullptr) {
      break;
    }
    if (dwarf_formref_die(&attr, &next) == nullptr) break;
    current = next;
  }
  return current;
}

// A namespace's, class's or structure's segment of a qualified name ("ns::", and an unnamed one
// as the demangler spells it: "(anonymous namespace)::", "{unnamed}::").
void AppendScope(std::string& qualified, Dwarf_Die* scope, int tag) {
  const char* name = dwarf_diename(scope);
  qualified += name != nullptr ? name : tag == DW_TAG_namespace ? "(anonymous namespace)" : "{unnamed}";
  qualified += "::";
}

// The namespaces and classes around a function's definition, as the demangler spells a
// linkage name's ("ns::(anonymous namespace)::"): a walk of its unit from the start.
std::string ScopePrefix(Dwarf_Die* definition) {
  std::string qualified;
  Dwarf_Die* scopes = nullptr;
  const int count = dwarf_getscopes_die(definition, &scopes);
  // scopes[0] is the definition itself, the last its unit.
  for (int i = count - 1; i >= 1; --i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type) {
      continue;
    }
    AppendScope(qualified, &scopes[i], tag);
  }
  std::free(scopes);
  return qualified;
}

// How dwarf_getscopes_die's walk of a unit (libdw_visit_scopes.c, classify_die, elfutils 0.188)
// treats a DIE with children: entered, and a scope of a qualified name (namespaces, classes,
// structures); entered only (code scopes); or not entered, though it may hold a function's
// declaration (a union's member function: libdw does not find it, and the name gets no prefix).
// Other DIEs hold no functions: types, variables, parameters.
enum class ScopeWalk { kNamed, kEntered, kOpaque, kOther };

ScopeWalk ClassifyScope(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
      return ScopeWalk::kNamed;
    case DW_TAG_compile_unit:
    case DW_TAG_module:
      return ScopeWalk::kEntered;
    case DW_TAG_union_type:
    case DW_TAG_interface_type:
      return ScopeWalk::kOpaque;
    default:
      return MayHaveScopes(tag) ? ScopeWalk::kEntered : ScopeWalk::kOther;
  }
}

// Whether `die` belongs to a C unit: C has no namespaces and no member functions, so a C
// function's name has no scope prefix, and the walk of its unit from the start that would find
// none (dwarf_getscopes_die, most of what naming libc's inlined functions cost) is not needed.
bool InCUnit(Dwarf_Die* die) {
  Dwarf_Die cu;
  if (dwarf_diecu(die, &cu, nullptr, nullptr) == nullptr) return false;
  switch (dwarf_srclang(&cu)) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
      return true;
    default:
      return false;
  }
}

// The file and line an inlined subroutine was called from (in its caller).
void CallSite(Dwarf_Die* cu, Dwarf_Die* inlined, std::string* file, uint32_t* line) {
  file->clear();
  *line = 0;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(inlined, DW_AT_call_line, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0) {
    *line = value > UINT32_MAX ? 0 : static_cast<uint32_t>(value);
  }
  if (dwarf_attr(inlined, DW_AT_call_file, &attr) != nullptr && dwarf_formudata(&attr, &value) == 0) {
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_getsrcfiles(cu, &files, &count) == 0 && value < count) {
      const char* name = dwarf_filesrc(files, value, nullptr, nullptr);
      if (name != nullptr) *file = name;
    }
  }
}

}  // namespace

std::unique_ptr<DwarfLines> DwarfLines::Open(std::unique_ptr<ElfImage> image, uint64_t max_bytes,
                                             std::string* error) {
  std::unique_ptr<DwarfLines> lines(new DwarfLines());
  HideUnreadSections(*image);
  lines->bytes_ = DebugBytes(*image);
  if (lines->bytes_ > max_bytes) {
    *error = "its DWARF takes " + std::to_string(lines->bytes_ >> 20) + " MiB, more than the " +
             std::to_string(max_bytes >> 20) + " MiB allowed: symbols only";
    return nullptr;
  }
  lines->terminated_sections_ = TerminateDebugSections(*image);
  lines->dwarf_ = dwarf_begin_elf(image->elf(), DWARF_C_READ, nullptr);
  if (lines->dwarf_ == nullptr) {
    *error = std::string("no DWARF libdw reads: ") + dwarf_errmsg(-1);
    return nullptr;
  }
  Dwarf_Aranges* aranges = nullptr;
  size_t count = 0;
  lines->have_aranges_ = dwarf_getaranges(lines->dwarf_, &aranges, &count) == 0 && count > 0;
  if (lines->have_aranges_) {
    for (size_t i = 0; i < count; ++i) {
      Dwarf_Off unit = 0;
      if (dwarf_getarangeinfo(dwarf_onearange(aranges, i), nullptr, nullptr, &unit) == 0) {
        lines->aranged_units_.push_back(unit);
      }
    }
    std::sort(lines->aranged_units_.begin(), lines->aranged_units_.end());
    lines->aranged_units_.erase(std::unique(lines->aranged_units_.begin(), lines->aranged_units_.end()),
                                lines->aranged_units_.end());
  }
  lines->image_ = std::move(image);
  return lines;
}

DwarfLines::~DwarfLines() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

bool DwarfLines::FindUnit(uint64_t vaddr, Dwarf_Die* cu) {
  if (have_aranges_ && dwarf_addrdie(dwarf_, vaddr, cu) != nullptr) return true;
  if (!unit_ranges_built_) {
    unit_ranges_built_ = true;
    Dwarf_Off offset = 0;
    Dwarf_Off next = 0;
    size_t header_size = 0;
    while (unit_ranges_.size() < kMaxUnitRanges &&
           dwarf_nextcu(dwarf_, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die die;
      const Dwarf_Off die_offset = offset + header_size;
      // A unit .debug_aranges lists is described there (the compiler writes both from the same
      // ranges): dwarf_addrdie has already said it holds no such address. Reading the others'
      // DIE ranges only spares loading every unit's abbreviations (libc6-dbg: 2,063 units, for
      // an address in none of them).
      const bool aranged = scope_index_ && std::binary_search(aranged_units_.begin(), aranged_units_.end(), die_offset);
      if (!aranged && dwarf_offdie(dwarf_, die_offset, &die) != nullptr) {
        Dwarf_Addr base = 0;
        Dwarf_Addr start = 0;
        Dwarf_Addr end = 0;
        ptrdiff_t it = 0;
        while (unit_ranges_.size() < kMaxUnitRanges && (it = dwarf_ranges(&die, it, &base, &start, &end)) > 0) {
          if (end > start) unit_ranges_.push_back(UnitRange{start, end, die_offset});
        }
      }
      if (next <= offset) break;
      offset = next;
    }
    std::sort(unit_ranges_.begin(), unit_ranges_.end(),
              [](const UnitRange& a, const UnitRange& b) { return a.start < b.start; });
  }
  auto it = std::upper_bound(unit_ranges_.begin(), unit_ranges_.end(), vaddr,
                             [](uint64_t value, const UnitRange& r) { return value < r.start; });
  // Ranges of different units do not overlap in real files; look back a little in case.
  for (int i = 0; i < 4 && it != unit_ranges_.begin(); ++i) {
    --it;
    if (vaddr < it->end) return dwarf_offdie(dwarf_, it->offset, cu) != nullptr;
  }
  return false;
}

void DwarfLines::LibdwScopes(Dwarf_Die* cu, uint64_t vaddr, std::vector<Dwarf_Die>* out) {
  out->clear();
  // dwarf_getscopes continues an inlined function's scopes with those of its abstract
  // definition; the physical nesting of the innermost function's DIE is dwarf_getscopes_die's.
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes(cu, vaddr, &scopes);
  Dwarf_Die innermost;
  bool found = false;
  for (int i = 0; i < count && i < kMaxScopes && !found; ++i) {
    if (IsFunction(dwarf_tag(&scopes[i]))) {
      innermost = scopes[i];
      found = true;
    }
  }
  std::free(scopes);
  scopes = nullptr;
  count = found ? dwarf_getscopes_die(&innermost, &scopes) : 0;
  for (int i = 0; i < count && i < kMaxScopes; ++i) out->push_back(scopes[i]);
  std::free(scopes);
}

bool DwarfLines::MayHaveRangesByAbbrev(Dwarf_Die* die) {
  // dwarf_tag has read the abbreviation into the DIE (the callers ask it first); without one
  // (damaged DWARF: libdw's end marker), the search itself says.
  const void* abbrev = die->abbrev;
  if (abbrev == nullptr || abbrev == reinterpret_cast<const void*>(-1l)) return MayHaveRanges(die);
  const auto [it, inserted] = ranges_by_abbrev_.try_emplace(abbrev, false);
  if (inserted) it->second = MayHaveRanges(die);
  return it->second;
}

bool DwarfLines::CoveringPath(Dwarf_Die* cu, uint64_t vaddr, std::vector<Dwarf_Die>* path) {
  path->clear();
  const auto [it, inserted] = unit_scopes_.try_emplace(dwarf_dieoffset(cu));
  UnitScopes& unit = it->second;
  if (inserted) {
    Dwarf_Die child;
    if (dwarf_child(cu, &child) == 0) {
      do {
        const int tag = dwarf_tag(&child);
        if (tag == DW_TAG_imported_unit) {
          unit.imports = true;
          break;
        }
        TopScope top;
        top.offset = dwarf_dieoffset(&child);
        top.first_range = static_cast<uint32_t>(unit.ranges.size());
        Dwarf_Addr base = 0, start = 0, end = 0;
        const bool may_have_ranges = MayHaveRangesByAbbrev(&child);
        for (ptrdiff_t r = 0; may_have_ranges && unit.ranges.size() < kMaxUnitRanges &&
                              (r = dwarf_ranges(&child, r, &base, &start, &end)) > 0;) {
          unit.ranges.emplace_back(start, end);
        }
        top.ranges = static_cast<uint32_t>(unit.ranges.size()) - top.first_range;
        if (top.ranges > 0) unit.scopes.push_back(top);
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (unit.imports) {
      unit.scopes.clear();
      unit.ranges.clear();
    }
  }
  if (unit.imports) return false;
  // dwarf_getscopes' rule: a DIE covers the address when one of its ranges holds it; the first
  // covering child of a level wins, and only scopes (functions, inlined calls, blocks) are
  // entered.
  const TopScope* top = nullptr;
  for (const TopScope& t : unit.scopes) {
    for (uint32_t r = t.first_range; r < t.first_range + t.ranges; ++r) {
      if (vaddr >= unit.ranges[r].first && vaddr < unit.ranges[r].second) {
        top = &t;
        break;
      }
    }
    if (top != nullptr) break;
  }
  if (top == nullptr) return true;
  Dwarf_Die die;
  if (dwarf_offdie(dwarf_, top->offset, &die) == nullptr) return false;
  path->push_back(die);
  while (path->size() < static_cast<size_t>(kMaxScopes) && MayHaveScopes(dwarf_tag(&path->back())) &&
         dwarf_haschildren(&path->back()) > 0) {
    Dwarf_Die child;
    if (dwarf_child(&path->back(), &child) != 0) break;
    bool covered = false;
    do {
      if (dwarf_tag(&child) == DW_TAG_imported_unit) return false;
      if (MayHaveRangesByAbbrev(&child) && dwarf_haspc(&child, vaddr) > 0) {
        covered = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
    if (!covered) break;
    path->push_back(child);
  }
  return true;
}

const std::vector<DwarfLines::ScopeChild>* DwarfLines::ScopeChildren(Dwarf_Die* die) {
  const Dwarf_Off offset = dwarf_dieoffset(die);
  if (const auto it = scope_children_.find(offset); it != scope_children_.end()) return &it->second;
  if (scope_children_listed_ >= max_scope_children_) return nullptr;
  // dwarf_siblingof jumps over a subtree through DW_AT_sibling, which GCC writes on every DIE
  // with children: a level costs a step per child, not per DIE below it.
  std::vector<ScopeChild> children;
  Dwarf_Die child;
  if (dwarf_child(die, &child) == 0) {
    do {
      if (scope_children_listed_ + children.size() >= max_scope_children_) {
        scope_children_listed_ = max_scope_children_;
        return nullptr;
      }
      children.push_back(ScopeChild{child, dwarf_dieoffset(&child)});
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  scope_children_listed_ += children.size();
  return &scope_children_.emplace(offset, std::move(children)).first->second;
}

std::string DwarfLines::IndexedScopePrefix(Dwarf_Die* definition) {
  Dwarf_Die parent;
  if (dwarf_diecu(definition, &parent, nullptr, nullptr) == nullptr) return ScopePrefix(definition);
  const Dwarf_Off offset = dwarf_dieoffset(definition);
  // Down from the unit, at each level into the child whose subtree holds the definition (the
  // last child starting at or before it: a subtree runs to the next child), as far as
  // dwarf_getscopes_die's walk enters.
  std::string qualified;
  for (int depth = 0; depth < kMaxScopes; ++depth) {
    const std::vector<ScopeChild>* children = ScopeChildren(&parent);
    if (children == nullptr) return ScopePrefix(definition);  // the index is full: libdw's walk
    auto holder = std::upper_bound(children->begin(), children->end(), offset,
                                   [](Dwarf_Off at, const ScopeChild& child) { return at < child.offset; });
    if (holder == children->begin()) break;
    --holder;
    if (holder->offset == offset) break;  // the definition itself: the scopes above are all
    parent = holder->die;
    const int tag = dwarf_tag(&parent);
    const ScopeWalk walk = ClassifyScope(tag);
    if (walk == ScopeWalk::kOpaque) return std::string();  // libdw's walk does not find it
    if (walk == ScopeWalk::kOther) break;  // holds no function: the scopes above are all
    if (walk == ScopeWalk::kNamed) AppendScope(qualified, &parent, tag);
  }
  return qualified;
}

// A function's name as perf spells ELF symbols: its linkage name demangled, else its DWARF
// name qualified by the namespaces and classes around its definition (what the demangler makes
// of a linkage name). Once per DIE, and the qualification once per definition (a function
// inlined in many places has one).
const std::string& DwarfLines::NameOf(Dwarf_Die* die) {
  const auto [it, inserted] = names_.try_emplace(dwarf_dieoffset(die));
  if (!inserted) return it->second;
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != nullptr ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != nullptr) {
    if (const char* linkage = dwarf_formstring(&attr)) return it->second = DemangleLikePerf(linkage);
  }
  if (dwarf_attr_integrate(die, DW_AT_name, &attr) == nullptr) return it->second;
  const char* name = dwarf_formstring(&attr);
  if (name == nullptr) return it->second;
  Dwarf_Die definition = Definition(die);
  const auto [prefix, new_prefix] = prefixes_.try_emplace(dwarf_dieoffset(&definition));
  if (new_prefix && !(scope_index_ && InCUnit(&definition))) {
    prefix->second = scope_index_ ? IndexedScopePrefix(&definition) : ScopePrefix(&definition);
  }
  return it->second = prefix->second + name;
}

bool DwarfLines::Chain(uint64_t vaddr, std::vector<SourceFrame>* frames) {
  frames->clear();
  Dwarf_Die cu;
  if (!FindUnit(vaddr, &cu)) return false;

  std::string file;
  uint32_t line = 0;
  if (Dwarf_Line* row = dwarf_getsrc_die(&cu, vaddr)) {
    const char* name = dwarf_linesrc(row, nullptr, nullptr);
    if (name != nullptr) file = name;
    int number = 0;
    if (dwarf_lineno(row, &number) == 0 && number > 0) line = static_cast<uint32_t>(number);
  }

  // The chain of callers is the physical nesting of the innermost function's DIE (as
  // eu-addr2line -i gives it): the covering path cut at its innermost function, innermost first.
  std::vector<Dwarf_Die>& path = path_;
  if (scope_index_ && CoveringPath(&cu, vaddr, &path)) {
    size_t innermost = path.size();
    for (size_t i = path.size(); i-- > 0;) {
      if (IsFunction(dwarf_tag(&path[i]))) {
        innermost = i;
        break;
      }
    }
    path.resize(innermost < path.size() ? innermost + 1 : 0);
    std::reverse(path.begin(), path.end());
  } else {
    LibdwScopes(&cu, vaddr, &path);
  }
  for (size_t i = 0; i < path.size() && i < static_cast<size_t>(kMaxScopes); ++i) {
    Dwarf_Die* scope = &path[i];
    const int tag = dwarf_tag(scope);
    if (tag == DW_TAG_inlined_subroutine) {
      frames->push_back(SourceFrame{NameOf(scope), file, line, /*inlined=*/true});
      CallSite(&cu, scope, &file, &line);
    } else if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
      frames->push_back(SourceFrame{NameOf(scope), file, line, /*inlined=*/false});
      break;
    }
  }
  // No function DIE covers the address (assembly with a line table only): the row alone.
  if (frames->empty() && (line != 0 || !file.empty())) frames->push_back(SourceFrame{"", file, line, false});
  return !frames->empty();
}

}  // namespace jitdump::symbols
