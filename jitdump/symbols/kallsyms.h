// Kernel symbols from a kallsyms file (/proc/kallsyms, or the copy `perf record` keeps in its
// build-id cache), read the way perf 6.1 reads them (tools/lib/symbol/kallsyms.c and
// tools/perf/util/symbol.c): text, weak, data and bss symbols ("T", "W", "D", "B" in either
// case), each ending where the next one starts, and a module's symbols ("name\t[module]")
// named without the module. The kernel's build id comes from its notes (/sys/kernel/notes).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/symbols/symbol_table.h"

namespace jitdump::symbols {

struct Kallsyms {
  SymbolTable table;     // in the file's addresses
  size_t symbols = 0;    // the symbols perf keeps in the file, whether or not `table` holds them all
  // The table holds only the symbols that name the addresses asked for (KallsymsWanted); any
  // other address may find a wrong one.
  bool filtered = false;
  // A filtered read could not be exact (symbols overlap, where perf's tree decides): read the
  // file again whole.
  bool needs_full_read = false;
  uint64_t text = 0;     // the address of _text in the file (perf's relocation reference); 0 when absent
  // The highest start among the kernel image's symbols (not a module's, a BPF program's or a
  // trampoline's), whether or not `table` holds it: below it, and from _text on, an address is
  // named by two of the image's symbols (the one it is in, the next one for its end).
  uint64_t image_last = 0;
  bool hidden = false;   // every address is 0: the kernel hides them (kptr_restrict, not root)
  // Modules' address ranges, for the DSO a module symbol belongs to ("[ext4]").
  struct Module {
    uint64_t start = 0;
    uint64_t end = 0;
    std::string name;  // "[ext4]"
  };
  std::vector<Module> modules;

  // The module holding `address` ("[ext4]"), or "" for the kernel image.
  std::string_view ModuleAt(uint64_t address) const;
};

// The addresses a report will name (all of them, before the first): a read then keeps only the
// symbols that can name one of them, not the file's 100,000+ symbols and their names (about
// 10 MB of tables and names for this machine's kernel, most of it fresh memory).
// What it keeps names those addresses exactly as the whole table does: the symbol starting at or
// before each one and, for its end, where the next symbol of the whole file starts (every
// symbol's start is kept, 9 bytes each). A symbol is left out when the next symbol read starts
// above it with no address asked for in between, so it names none of them; a module's symbols
// are all kept (a module's last one bounds its range).
struct KallsymsWanted {
  std::span<const uint64_t> addresses;  // sorted, in the recording's addresses
  // The recording's _text: the file's addresses are the recording's moved by the file's _text
  // minus this one (perf's relocation, KernelSymbols). 0: they are the same. Until the file's
  // _text is read (its first lines), every symbol is kept.
  uint64_t recorded_text = 0;
};

// Reads a kallsyms file, whole or only what `wanted` asks for. False (with `error`) when it
// cannot be read or holds no symbol. At most kMaxKallsymsSymbols symbols are kept (a real kernel
// has about 200,000).
inline constexpr size_t kMaxKallsymsSymbols = 4u << 20;
bool ReadKallsyms(const std::string& path, Kallsyms* out, std::string* error, const KallsymsWanted* wanted = nullptr);
// The same from text in memory (the tests, the fuzzer).
bool ParseKallsyms(std::string_view text, Kallsyms* out, std::string* error, const KallsymsWanted* wanted = nullptr);

// The GNU build id in a file of ELF notes (/sys/kernel/notes); empty when there is none.
std::vector<uint8_t> ReadNotesBuildId(const std::string& path);
std::vector<uint8_t> ParseNotesBuildId(std::span<const uint8_t> notes);

}  // namespace jitdump::symbols
