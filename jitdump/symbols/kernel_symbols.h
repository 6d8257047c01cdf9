// The recording's kernel symbols: /proc/kallsyms when this machine runs the recording's kernel
// (the same build id in /sys/kernel/notes, or, when the recording has none, the same release),
// else the kallsyms `perf record` copied into its build-id cache, else none ("[kernel]" and
// the address). On the recording's kernel the copy is read first when every address asked for
// is in the kernel image (ReadImageFromCopy). perf's relocation applies: when the kallsyms read
// comes from another boot than the recording (KASLR), addresses move by the difference of their
// _text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jitdump/symbols/file_locator.h"
#include "jitdump/symbols/kallsyms.h"
#include "jitdump/symbols/symbolizer.h"

namespace jitdump::symbols {

class KernelSymbols {
 public:
  // What the recording says of its kernel, and where this machine's kernel is described.
  void Configure(const Kernel& kernel, const Options& options);
  // Whether this machine runs the recording's kernel (as far as the recording tells).
  bool SameKernel(std::string* why);

  // The recorded addresses the next lookups will ask for (any order): the next load keeps only the
  // symbols that name them (KallsymsWanted). A lookup of any other address loads them all.
  void Want(std::vector<uint64_t> addresses);

  // The symbol at `address` (a recorded kernel address), loading the symbols on first use.
  const SymbolTable::Symbol* Find(uint64_t address, FileLocator& locator, std::string_view* module);
  std::string_view Name(const SymbolTable::Symbol& symbol) const { return kallsyms_.table.Name(symbol); }
  // The symbol's start in recorded addresses.
  uint64_t Start(const SymbolTable::Symbol& symbol) const { return symbol.start - delta_; }
  bool available() const { return loaded_ && kallsyms_.symbols > 0; }
  // Frees the symbols (read again, whole, on the next Find); the report stays.
  void Release() {
    kallsyms_ = Kallsyms();
    loaded_ = false;
    decltype(wanted_)().swap(wanted_);
  }

  FileReport& report() { return report_; }
  bool asked() const { return asked_; }

 private:
  void Load(FileLocator& locator);
  // The kernel image's symbols from the copy of kallsyms `perf record` left in its build-id
  // cache, when every address wanted is the image's: the same build id is the same image, so
  // the copy names those addresses as /proc/kallsyms would (moved by the difference of their
  // _text when made in another boot), without the kernel formatting its 100,000+ lines, a
  // sizeable share of a report's CPU (~25 ms of system time on a 2-vCPU VM). Modules, BPF
  // programs and trampolines load where each boot puts them: an address outside the image,
  // an address not wanted, a hidden or unreadable copy, or a recording that does not say where
  // its _text was: false, and /proc/kallsyms is read. `path`: the copy's.
  bool ReadImageFromCopy(FileLocator& locator, std::string* path);
  // One kallsyms file, filtered by wanted_ when set (read again whole when that cannot be exact).
  bool Read(const std::string& path, std::string* error);

  std::vector<uint8_t> build_id_;
  uint64_t text_address_ = 0;
  uint64_t text_end_ = 0;  // the end of the recording's kernel map; 0: not known
  std::string os_release_;
  std::string kallsyms_path_ = "/proc/kallsyms";
  std::string notes_path_ = "/sys/kernel/notes";
  std::string host_release_;
  bool configured_ = false;
  bool loaded_ = false;
  bool asked_ = false;
  Kallsyms kallsyms_;
  std::vector<uint64_t> wanted_;  // Want's; empty: the whole file
  uint64_t delta_ = 0;  // kallsyms address - recorded address
  FileReport report_;
};

}  // namespace jitdump::symbols
