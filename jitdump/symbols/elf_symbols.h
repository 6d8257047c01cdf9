// A user-space file's symbols, read the way perf 6.1 reads them (tools/perf/util/symbol-elf.c,
// dso__load_sym and dso__synthesize_plt_symbols), into a SymbolTable in perf's address space:
// file offsets, which is what perf's map_ip makes of a sampled address (address - mapping
// start + pgoff).
//
// Two files take part, as in perf: the one with the symbol table (`symbols`: a separate debug
// file, or the binary itself when it kept its .symtab) and the one that was mapped (`runtime`),
// whose program headers turn a symbol's address into a file offset (a debug file's program
// headers say nothing of the file's layout: its segments are NOBITS).
#pragma once

#include <cstdint>

#include "jitdump/symbols/elf_image.h"
#include "jitdump/symbols/symbol_table.h"

namespace jitdump::symbols {

// Larger symbol or string tables are refused (a hostile header; libjvm.so's .symtab is 1.4 MB).
inline constexpr uint64_t kMaxSymbolTableBytes = 512ull << 20;

enum class SymbolSection { kSymtab, kDynsym };

// Adds the functions, objects and text/data labels of `symbols`' .symtab or .dynsym (perf's
// elf_sym__filter and elf_sym__is_label), each moved into file-offset space through the
// runtime file's PT_LOAD that holds it (else through its section), then ends the pass with
// perf's fix-ups. Returns the number of symbols added; 0 when the section is missing or damaged.
size_t AddElfSymbols(const ElfImage& symbols, const ElfImage& runtime, SymbolSection section,
                     SymbolTable::Builder* builder);

// perf's PLT symbols: "name@plt" for each .rela.plt (or .rel.plt) entry of `runtime`, one .plt
// entry each after the PLT header, in file-offset space. Added after the passes, as perf does.
size_t AddPltSymbols(const ElfImage& runtime, SymbolTable::Builder* builder);

}  // namespace jitdump::symbols
