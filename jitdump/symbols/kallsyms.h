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
  uint64_t text = 0;     // the address of _text in the file (perf's relocation reference); 0 when absent
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

// Reads a kallsyms file. False (with `error`) when it cannot be read or holds no symbol.
// At most kMaxKallsymsSymbols symbols are kept (a real kernel has about 200,000).
inline constexpr size_t kMaxKallsymsSymbols = 4u << 20;
bool ReadKallsyms(const std::string& path, Kallsyms* out, std::string* error);
// The same from text in memory (the tests, the fuzzer).
bool ParseKallsyms(std::string_view text, Kallsyms* out, std::string* error);

// The GNU build id in a file of ELF notes (/sys/kernel/notes); empty when there is none.
std::vector<uint8_t> ReadNotesBuildId(const std::string& path);
std::vector<uint8_t> ParseNotesBuildId(std::span<const uint8_t> notes);

}  // namespace jitdump::symbols
