// libFuzzer target: jitdump/symbols on hostile input. The input is read as an ELF file (its
// build id, debuglink, damage check, .symtab/.dynsym/PLT symbols with perf's rules, the
// MiniDebugInfo inside it, its DWARF inline chains), through the whole Symbolizer (the file
// looked up by path as a mapping's file), and as kallsyms text (whole, and filtered by some
// addresses: the same names for them) and kernel notes. Besides no crash / leak / UB /
// unbounded memory, it checks the table's promises: a symbol found covers the address, and a
// lookup's frames are never empty.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/symbols/dwarf_lines.h"
#include "jitdump/symbols/elf_image.h"
#include "jitdump/symbols/elf_symbols.h"
#include "jitdump/symbols/kallsyms.h"
#include "jitdump/symbols/mini_debuginfo.h"
#include "jitdump/symbols/symbolizer.h"

namespace {

using namespace jitdump::symbols;

[[noreturn]] void Fail(const char* what, uint64_t value) {
  std::fprintf(stderr, "symbols_fuzzer: %s (%llu)\n", what, static_cast<unsigned long long>(value));
  std::abort();
}

void CheckTable(const SymbolTable& table) {
  for (const SymbolTable::Symbol& s : table.symbols()) {
    if (!s.live) continue;
    (void)table.Name(s);
    for (uint64_t a : {s.start, s.end, s.start + (s.end - s.start) / 2}) {
      const SymbolTable::Symbol* found = table.Find(a);
      if (found != nullptr && (a < found->start || (a >= found->end && !(a == found->start && found->end == found->start)))) {
        Fail("a symbol found does not cover the address", a);
      }
    }
  }
}

// A read filtered by some addresses (around the whole table's first symbols' starts and ends)
// names each of them as the whole table does.
void CheckFilteredKallsyms(std::string_view text, const Kallsyms& whole) {
  std::vector<uint64_t> wanted;
  for (size_t i = 0; i < whole.table.symbols().size() && i < 32; i += 3) {
    const SymbolTable::Symbol& s = whole.table.symbols()[i];
    for (uint64_t a : {s.start - 1, s.start, s.end - 1, s.end}) wanted.push_back(a);
  }
  std::sort(wanted.begin(), wanted.end());
  Kallsyms filtered;
  std::string error;
  const KallsymsWanted want{wanted, 0};
  if (!ParseKallsyms(text, &filtered, &error, &want)) Fail("a filtered kallsyms read failed where the whole one did not", 0);
  if (filtered.needs_full_read) return;
  for (uint64_t a : wanted) {
    const SymbolTable::Symbol* x = whole.table.Find(a);
    const SymbolTable::Symbol* y = filtered.table.Find(a);
    if ((x == nullptr) != (y == nullptr) ||
        (x != nullptr && (x->start != y->start || x->end != y->end || whole.table.Name(*x) != filtered.table.Name(*y))) ||
        whole.ModuleAt(a) != filtered.ModuleAt(a)) {
      Fail("a filtered kallsyms read names an address otherwise", a);
    }
  }
}

void ReadAsElf(const uint8_t* data, size_t size) {
  std::string error;
  std::unique_ptr<ElfImage> image = ElfImage::OpenBytes(std::vector<uint8_t>(data, data + size), &error);
  if (image == nullptr) return;
  (void)image->Damage();
  (void)image->debuglink();
  (void)image->HasDwarf();
  for (uint64_t offset : {uint64_t{0}, uint64_t{0x1000}, size / 2}) (void)image->VaddrOfOffset(offset);
  SymbolTable::Builder builder;
  AddElfSymbols(*image, *image, SymbolSection::kSymtab, &builder);
  AddElfSymbols(*image, *image, SymbolSection::kDynsym, &builder);
  if (std::unique_ptr<ElfImage> mini = OpenMiniDebugInfo(*image, &error)) {
    AddElfSymbols(*mini, *image, SymbolSection::kSymtab, &builder);
  }
  AddPltSymbols(*image, &builder);
  const SymbolTable table = builder.Build();
  CheckTable(table);
  std::unique_ptr<DwarfLines> dwarf = DwarfLines::Open(std::move(image), 64ull << 20, &error);
  if (dwarf != nullptr) {
    std::vector<SourceFrame> frames;
    size_t asked = 0;
    for (const SymbolTable::Symbol& s : table.symbols()) {
      if (asked++ >= 64) break;
      dwarf->Chain(s.start, &frames);
      dwarf->Chain(s.start + 1, &frames);
    }
    dwarf->Chain(0, &frames);
  }
}

// A directory of this process's own, removed at exit.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char pattern[] = "/tmp/jdfuzz-symbols-XXXXXX";
    if (const char* made = mkdtemp(pattern)) path = made;
  }
  ~ScratchDir() {
    if (!path.empty()) rmdir(path.c_str());
  }
};

// The whole Symbolizer, the input as the file of a mapping.
void Symbolize(const uint8_t* data, size_t size) {
  static ScratchDir scratch;
  const std::string& dir = scratch.path;
  if (dir.empty()) return;
  const std::string path = dir + "/input.so";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  Options options;
  options.buildid_dir = dir + "/no-cache";
  options.debug_dirs = {dir + "/no-debug"};
  options.kallsyms = path;
  options.kernel_notes = path;
  Symbolizer symbolizer(options);
  symbolizer.SetRecordingKernel({});
  for (uint64_t address : {uint64_t{0x1000}, uint64_t{0x1100}, uint64_t{0x1234}, uint64_t{0x2000}}) {
    const Lookup l = symbolizer.Find(Mapping{path, {}, 0x1000, 0x3000, 0x1000, 0}, address);
    if (l.frames.empty()) Fail("a lookup without frames", address);
    const Lookup k = symbolizer.FindKernel(0xffffffff81000000ull + address);
    if (k.frames.empty()) Fail("a kernel lookup without frames", address);
  }
  (void)symbolizer.Files();
  unlink(path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ReadAsElf(data, size);
  Symbolize(data, size);
  Kallsyms kallsyms;
  std::string error;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (ParseKallsyms(text, &kallsyms, &error)) {
    CheckTable(kallsyms.table);
    CheckFilteredKallsyms(text, kallsyms);
  }
  (void)ParseNotesBuildId(std::span<const uint8_t>(data, size));
  return 0;
}
