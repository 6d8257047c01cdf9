// libFuzzer target: jitdump/symbols on hostile input. The input is read as an ELF file (its
// build id, debuglink, damage check, .symtab/.dynsym/PLT symbols with perf's rules, the
// MiniDebugInfo inside it, its DWARF inline chains), through the whole Symbolizer (the file
// looked up by path as a mapping's file), as kallsyms text (whole, and filtered by some
// addresses: the same names for them; and as perf's copy of kallsyms in a build-id cache: the
// same names as without the copy) and kernel notes. Besides no crash / leak / UB / unbounded
// memory, it checks the table's promises: a symbol found covers the address, and a lookup's
// frames are never empty.
#include <sys/stat.h>
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

// A directory of this process's own, removed at exit (what is made in it goes first); "" when
// none could be made.
const std::string& ScratchDir() {
  static const struct Dir {
    std::string path;
    Dir() {
      char pattern[] = "/tmp/jdfuzz-symbols-XXXXXX";
      if (const char* made = mkdtemp(pattern)) path = made;
    }
    ~Dir() {
      if (!path.empty()) rmdir(path.c_str());
    }
  } dir;
  return dir.path;
}

bool WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && written;
}

// The whole Symbolizer, the input as the file of a mapping.
void Symbolize(const uint8_t* data, size_t size) {
  const std::string& dir = ScratchDir();
  if (dir.empty()) return;
  const std::string path = dir + "/input.so";
  if (!WriteFile(path, data, size)) return;
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

// The kernel's symbols through the copy `perf record` keeps in its build-id cache
// (KernelSymbols::ReadImageFromCopy): the input is both that copy and this machine's kallsyms
// (one file), the recording's kernel this machine's (notes with the same build id), its _text
// moved from the file's and its kernel map's end as the input picks. The copy is taken exactly when the
// rule says; taken or refused, every kernel address is named as a reader without a build-id
// cache names it, the addresses announced (WantKernel) and then one that was not.
void KernelFromCopy(const uint8_t* data, size_t size, const Kallsyms& whole) {
  const std::string& dir = ScratchDir();
  if (dir.empty() || whole.text == 0) return;
  static const uint8_t kBuildId[20] = {0xfe, 0xed, 0xfa, 0xce, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  static const std::string cache = dir + "/cache";
  static const std::string copy_dir = cache + "/[kernel.kallsyms]/feedface0102030405060708090a0b0c0d0e0f10";
  static const std::string copy = copy_dir + "/kallsyms";
  static const std::string notes = dir + "/notes";
  static const bool made = [] {
    for (const std::string& d : {cache, cache + "/[kernel.kallsyms]", copy_dir}) mkdir(d.c_str(), 0700);
    FILE* f = std::fopen(notes.c_str(), "wb");
    if (f == nullptr) return false;
    const uint32_t header[3] = {4, sizeof kBuildId, 3};  // NT_GNU_BUILD_ID
    std::fwrite(header, sizeof header, 1, f);
    std::fwrite("GNU", 4, 1, f);
    std::fwrite(kBuildId, sizeof kBuildId, 1, f);
    return std::fclose(f) == 0;
  }();
  // Before the scratch directory's own end (made after it, ended before it).
  static const struct Cleanup {
    ~Cleanup() {
      unlink(notes.c_str());
      for (const std::string& d : {copy_dir, cache + "/[kernel.kallsyms]", cache}) rmdir(d.c_str());
    }
  } cleanup;
  if (!made || !WriteFile(copy, data, size)) return;
  // The recording's _text and the end of its kernel map, in its own addresses: none, just past
  // the image's last symbol, or halfway into the image (the copy refused before it is read).
  static const uint64_t kShifts[] = {0, 0x1000, 0x200000, uint64_t{0} - 0x200000};
  const uint64_t shift = kShifts[size % 4];
  const uint64_t text = whole.text - shift;
  const uint64_t ends[] = {0, whole.image_last + 1 - shift, text + (whole.image_last - whole.text) / 2};
  const uint64_t text_end = ends[(size / 4) % 3];
  // Around some symbols' starts and ends: only those in the image (the copy's to name); any (a
  // module's, past the image: the copy refused); or those in the image and one just before it.
  const size_t mode = (size / 12) % 3;
  std::vector<uint64_t> wanted;
  for (size_t i = 0; i < whole.table.symbols().size() && wanted.size() < 24; i += 1 + whole.table.symbols().size() / 8) {
    const SymbolTable::Symbol& s = whole.table.symbols()[i];
    for (uint64_t a : {s.start, s.end - 1, s.end}) {
      if (mode == 1 || (a >= whole.text && a < whole.image_last)) wanted.push_back(a - shift);
    }
  }
  if (mode == 2) wanted.push_back(text - 1);
  const uint64_t not_announced = text + 7;
  Options with_copy;
  with_copy.buildid_dir = cache;
  with_copy.debug_dirs = {dir + "/no-debug"};
  with_copy.kallsyms = copy;
  with_copy.kernel_notes = notes;
  Options without = with_copy;
  without.buildid_dir = dir + "/no-cache";
  Symbolizer a(with_copy);
  Symbolizer b(without);
  for (Symbolizer* s : {&a, &b}) {
    s->SetRecordingKernel(Kernel{kBuildId, text, {}, text_end});
    s->WantKernel(wanted);
  }
  // The copy is taken exactly when every address announced is in the recording's kernel map and,
  // moved by the difference of _text, in the copy's image: from _text up to its last symbol.
  bool image = !wanted.empty();
  for (uint64_t address : wanted) {
    image = image && (text_end <= text || (address >= text && address < text_end)) &&
            address + shift >= whole.text && address + shift < whole.image_last;
  }
  const size_t announced = wanted.size();
  wanted.push_back(not_announced);  // last: it makes both read the whole file (unless announced too)
  for (size_t i = 0; i < wanted.size(); ++i) {
    const uint64_t address = wanted[i];
    if (i == announced) {  // the announced ones looked up: how the first lookup read the kernel's symbols
      bool taken = false;
      for (const FileReport& r : a.Files()) {
        taken = taken || (r.recorded_path == "[kernel.kallsyms]" && r.found_how == "kallsyms-cache");
      }
      if (taken != image) {
        Fail(taken ? "the kallsyms copy taken for an address outside its image" : "the kallsyms copy refused for the image's addresses",
             announced);
      }
    }
    const Lookup x = a.FindKernel(address);
    if (x.frames.empty()) Fail("a kernel lookup without frames", address);
    const std::string function(x.frames[0].function), module(x.module);
    const uint64_t offset = x.frames[0].offset;
    const Lookup y = b.FindKernel(address);
    if (y.frames.empty()) Fail("a kernel lookup without frames", address);
    if (function != y.frames[0].function || offset != y.frames[0].offset || module != y.module) {
      Fail("the kallsyms copy names a kernel address otherwise", address);
    }
  }
  unlink(copy.c_str());
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
    KernelFromCopy(data, size, kallsyms);
  }
  (void)ParseNotesBuildId(std::span<const uint8_t>(data, size));
  return 0;
}
