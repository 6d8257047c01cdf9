#include "jitdump/symbols/elf_symbols.h"

#include <string>
#include <string_view>

#include "jitdump/symbols/demangle.h"

namespace jitdump::symbols {
namespace {

Binding BindingOf(const GElf_Sym& sym) {
  switch (GELF_ST_BIND(sym.st_info)) {
    case STB_GLOBAL: return Binding::kGlobal;
    case STB_WEAK: return Binding::kWeak;
    default: return Binding::kLocal;
  }
}

bool IsFunction(const GElf_Sym& sym) {
  const int type = GELF_ST_TYPE(sym.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF;
}

bool IsObject(const GElf_Sym& sym) {
  return GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF;
}

bool IsLabel(const GElf_Sym& sym) {
  const int visibility = GELF_ST_VISIBILITY(sym.st_other);
  return GELF_ST_TYPE(sym.st_info) == STT_NOTYPE && sym.st_name != 0 && sym.st_shndx != SHN_UNDEF &&
         sym.st_shndx != SHN_ABS && visibility != STV_HIDDEN && visibility != STV_INTERNAL;
}

// A section header by index; false when there is none.
bool SectionHeader(const ElfImage& image, size_t index, GElf_Shdr* shdr) {
  Elf_Scn* scn = elf_getscn(image.elf(), index);
  return scn != nullptr && gelf_getshdr(scn, shdr) != nullptr;
}

}  // namespace

size_t AddElfSymbols(const ElfImage& symbols, const ElfImage& runtime, SymbolSection section,
                     SymbolTable::Builder* builder) {
  const bool dynsym = section == SymbolSection::kDynsym;
  GElf_Shdr shdr;
  Elf_Scn* scn = symbols.FindSection(dynsym ? ".dynsym" : ".symtab", &shdr);
  if (scn == nullptr || shdr.sh_type != (dynsym ? SHT_DYNSYM : SHT_SYMTAB)) return 0;
  Elf_Data* data = symbols.SectionData(scn, kMaxSymbolTableBytes);
  GElf_Shdr strings_shdr;
  if (data == nullptr || !SectionHeader(symbols, shdr.sh_link, &strings_shdr)) return 0;
  if (strings_shdr.sh_type != SHT_STRTAB || strings_shdr.sh_size > kMaxSymbolTableBytes) return 0;
  const size_t entry_size = gelf_fsize(symbols.elf(), ELF_T_SYM, 1, EV_CURRENT);
  if (entry_size == 0) return 0;
  const size_t count = data->d_size / entry_size;

  size_t added = 0;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    const bool label = IsLabel(sym);
    if (!label && !IsFunction(sym) && !IsObject(sym)) continue;
    // Absolute symbols and the other reserved indexes name no section (perf gives up the whole
    // table on them; skipping the one symbol keeps the rest).
    if (sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE) continue;
    GElf_Shdr section_shdr;
    if (!SectionHeader(symbols, sym.st_shndx, &section_shdr)) continue;
    // Not loaded at run time (.gnu.warning.*): no code of it is ever sampled.
    if ((section_shdr.sh_flags & SHF_ALLOC) == 0) continue;
    const ElfImage* section_file = &symbols;
    if (section_shdr.sh_type == SHT_NOBITS) {
      // A debug file's sections are NOBITS: their offsets are the runtime file's.
      if (!SectionHeader(runtime, sym.st_shndx, &section_shdr)) continue;
      section_file = &runtime;
    }
    if (label) {
      const std::string_view section_name = section_file->SectionName(section_shdr);
      if (section_name.find("text") == std::string_view::npos && section_name.find("data") == std::string_view::npos) {
        continue;
      }
    }
    const char* name = elf_strptr(symbols.elf(), shdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;

    uint64_t start = sym.st_value;
    if (const ElfImage::Load* load = runtime.LoadAtVaddr(start)) {
      start -= load->vaddr - load->offset;
    } else {
      start -= section_shdr.sh_addr - section_shdr.sh_offset;
    }
    builder->Add(start, sym.st_size, BindingOf(sym), name);
    ++added;
  }
  if (added > 0) builder->FinishPass();
  return added;
}

size_t AddPltSymbols(const ElfImage& runtime, SymbolTable::Builder* builder) {
  GElf_Shdr dynsym_shdr;
  size_t dynsym_index = 0;
  Elf_Scn* dynsym = runtime.FindSection(".dynsym", &dynsym_shdr, &dynsym_index);
  if (dynsym == nullptr || dynsym_shdr.sh_type != SHT_DYNSYM) return 0;
  GElf_Shdr rel_shdr;
  Elf_Scn* rel = runtime.FindSection(".rela.plt", &rel_shdr);
  if (rel == nullptr) rel = runtime.FindSection(".rel.plt", &rel_shdr);
  if (rel == nullptr || rel_shdr.sh_link != dynsym_index) return 0;
  if (rel_shdr.sh_type != SHT_RELA && rel_shdr.sh_type != SHT_REL) return 0;
  GElf_Shdr plt_shdr;
  if (runtime.FindSection(".plt", &plt_shdr) == nullptr) return 0;
  Elf_Data* rel_data = runtime.SectionData(rel, kMaxSymbolTableBytes);
  Elf_Data* syms = runtime.SectionData(dynsym, kMaxSymbolTableBytes);
  if (rel_data == nullptr || syms == nullptr || rel_shdr.sh_entsize == 0) return 0;

  // x86-64 and the architectures perf does not special-case: the header and each entry are
  // the .plt's sh_entsize.
  uint64_t entry_size = plt_shdr.sh_entsize;
  uint64_t header_size = plt_shdr.sh_entsize;
  switch (runtime.header().e_machine) {
    case EM_ARM: header_size = 20; entry_size = 12; break;
    case EM_AARCH64: header_size = 32; entry_size = 16; break;
    case EM_SPARC: header_size = 48; entry_size = 12; break;
    case EM_SPARCV9: header_size = 128; entry_size = 32; break;
    default: break;
  }
  const size_t count = rel_shdr.sh_size / rel_shdr.sh_entsize;
  uint64_t offset = plt_shdr.sh_offset + header_size;
  size_t added = 0;
  for (size_t i = 0; i < count; ++i) {
    size_t symbol_index = 0;
    if (rel_shdr.sh_type == SHT_RELA) {
      GElf_Rela rela;
      if (gelf_getrela(rel_data, static_cast<int>(i), &rela) == nullptr) break;
      symbol_index = GELF_R_SYM(rela.r_info);
    } else {
      GElf_Rel r;
      if (gelf_getrel(rel_data, static_cast<int>(i), &r) == nullptr) break;
      symbol_index = GELF_R_SYM(r.r_info);
    }
    GElf_Sym sym;
    if (gelf_getsym(syms, static_cast<int>(symbol_index), &sym) == nullptr) break;
    const char* name = elf_strptr(runtime.elf(), dynsym_shdr.sh_link, sym.st_name);
    // perf demangles the name before it adds "@plt" (and keeps at most 1023 characters).
    std::string spelled = DemangleLikePerf(name != nullptr ? name : "") + "@plt";
    if (spelled.size() > 1023) spelled.resize(1023);
    builder->Add(offset, entry_size, Binding::kGlobal, spelled, /*spelled=*/true);
    offset += entry_size;
    ++added;
  }
  return added;
}

}  // namespace jitdump::symbols
