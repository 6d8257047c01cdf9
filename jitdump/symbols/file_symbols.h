// One mapped file's symbols: finding the file a recording's mapping names (by build id when the
// recording has one), the symbol table perf would read for it, and where its DWARF is.
//
// The search follows perf 6.1's dso__load (tools/perf/util/symbol.c): for the symbol table, the
// first of .gnu_debuglink's file, perf's build-id cache, /usr/lib/debug/PATH.debug,
// /usr/lib/debug/PATH, /usr/lib/debug/.build-id/xx/rest.debug, the file itself, that has a
// .symtab, with the build id the recording gives (or, without one, the file's own); a file
// whose build id differs is never read, and the report says so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jitdump/symbols/elf_image.h"
#include "jitdump/symbols/file_locator.h"
#include "jitdump/symbols/symbol_table.h"
#include "jitdump/symbols/symbolizer.h"

namespace jitdump::symbols {

class DwarfLines;

// What a recorded path stands for.
enum class PathKind : uint8_t {
  kFile,     // a file: "/usr/lib/x86_64-linux-gnu/libc.so.6", "/app/lib.so (deleted)"
  kVdso,     // "[vdso]"
  kNoCode,   // "//anon", "[heap]", "[stack]", "/memfd:...", "/tmp/perf-1.map", ...: nothing to read
};
PathKind ClassifyPath(std::string_view path);

struct FileSymbols {
  FileReport report;
  // Outcome::kSymbol when a symbol table was read (it may still be empty), else why not.
  Outcome status = Outcome::kNoFile;
  SymbolTable table;
  // Display names of table symbols, filled on first use ({} = not yet).
  std::vector<std::string_view> names;
  // The mapped file's PT_LOAD headers: file offset -> ELF address for DWARF.
  std::vector<ElfImage::Load> loads;
  std::vector<uint8_t> build_id;  // the recording's, else the file's own
  // The table was freed (Symbolizer::Release): the file is read again when asked for.
  bool released = false;

  // Where the DWARF is, to open it when a lookup needs it (and again after the cache closed it).
  std::string dwarf_path;
  uint32_t dwarf_pid = 0;  // non-zero: dwarf_path is inside this process's root
  bool dwarf_own_vdso = false;  // this process's vdso
  bool dwarf_refused = false;
  std::unique_ptr<DwarfLines> dwarf;
  uint64_t dwarf_bytes = 0;
  uint64_t dwarf_last_use = 0;

  std::optional<uint64_t> VaddrOfOffset(uint64_t offset) const;
};

// Whether this process's vdso may stand for the recording's [vdso] (the same kernel).
struct VdsoPolicy {
  bool same_kernel = false;
  std::string why;  // when not
};

// Finds and reads the file of `mapping` (its path classified kFile or kVdso).
std::unique_ptr<FileSymbols> LoadFileSymbols(const Mapping& mapping, FileLocator& locator, const Options& options,
                                             const VdsoPolicy& vdso);

// Opens the DWARF `file` names (checking its build id again). False with the reason in
// `file.report.problem` when it cannot, or when it is larger than `max_bytes`.
bool OpenFileDwarf(FileSymbols& file, FileLocator& locator, uint64_t max_bytes);

}  // namespace jitdump::symbols
