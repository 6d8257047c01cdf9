// Native and kernel symbols for the addresses of a perf recording, without perf: what
// `perf script` names a sampled address (the same names: perf 6.1's symbol rules, its C++
// demangling, its file search), plus what perf 6.1 never shows for native code: the DWARF
// inline chain with file:line, where debug information exists.
//
// No perf.data and no JVM knowledge: the caller passes what the recording says about the
// mapping an address lies in (MMAP2 and the BUILD_ID feature) and the address.
//
//   Symbolizer symbols;
//   symbols.SetRecordingKernel({kernel_build_id, text_address, os_release});
//   Lookup found = symbols.Find({path, build_id, start, end, pgoff, pid}, ip);
//   for (const Frame& f : found.frames) ...   // innermost first; the last is the ELF symbol's
//
// Files are found the way perf finds them (and matched by build id when the recording has one;
// a file whose build id differs is never used, and Files() says so): the symbol table from a
// separate debug file (.gnu_debuglink, perf's build-id cache, /usr/lib/debug/.build-id, ...)
// or the file itself (.symtab, else .dynsym, plus MiniDebugInfo), the file itself through the
// recorded path, the process's root for a container's files (/proc/PID/root, while the process
// lives), /proc/PID/map_files for deleted files, and perf's build-id cache (~/.debug) for
// anything `perf record` copied there. Kernel addresses are named from /proc/kallsyms when this
// machine runs the recording's kernel, else from perf's copy in the build-id cache.
//
// One Symbolizer per thread (not thread-safe). It never throws and never crashes on a damaged
// or hostile file: such a file names nothing (Outcome::kNotElf / kNoSymbol).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::symbols {

// What the recording says about the mapping an address lies in. Views are read during the call
// only.
struct Mapping {
  // As recorded (MMAP2's filename): "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]", "//anon",
  // "/memfd:x (deleted)", "/app/lib.so (deleted)".
  std::string_view path;
  std::span<const uint8_t> build_id;  // MMAP2's or the BUILD_ID feature's; empty when unknown
  uint64_t start = 0;                 // the mapping: [start, end) at file offset pgoff
  uint64_t end = 0;
  uint64_t pgoff = 0;
  // The process (host pid), for /proc/PID/root and /proc/PID/map_files while it lives; 0: do
  // not look at /proc.
  uint32_t pid = 0;
};

// The recording's kernel: [kernel.kallsyms]'s build id (BUILD_ID feature), the address of
// _text it saw (the pgoff of its "[kernel.kallsyms]_text" MMAP: perf's relocation reference),
// HEADER_OSRELEASE and where that MMAP ends (perf 6.1 maps the image's text up to _etext, or up
// to the first module). Any may be empty or 0 when the recording lacks it.
struct Kernel {
  std::span<const uint8_t> build_id;
  uint64_t text_address = 0;
  std::string_view os_release;
  uint64_t text_end = 0;
};

struct Frame {
  // perf 6.1's spelling: C++ demangled without parameters ("JavaThread::run"), "memcpy@plt";
  // empty when nothing names the address.
  std::string_view function;
  // address - the function's start; for an unnamed address its file offset (kernel: the
  // address itself), which is what perf prints for "[unknown]".
  uint64_t offset = 0;
  std::string_view file;  // source file from DWARF; empty when unknown
  uint32_t line = 0;      // 0 when unknown
  bool inlined = false;   // inlined into the next frame
};

enum class Outcome : uint8_t {
  kSymbol,             // the frames name the address
  kNoSymbol,           // the file was read; no symbol covers the address
  kNoFile,             // no file for the mapping was found
  kBuildIdMismatch,    // files were found but their build ids differ from the recording's
  kNotElf,             // the file is damaged, truncated or no ELF
  kNoCode,             // anonymous memory, heap, stack, a perf map, a memfd: no file to read
  kKernelUnavailable,  // no kallsyms for the recording's kernel: "[kernel]" + address
};
const char* OutcomeName(Outcome outcome);  // "symbol", "no-symbol", "no-file", ...

struct Lookup {
  Outcome outcome = Outcome::kNoFile;
  // Innermost first: inlined frames (with DWARF), then the function that owns the code (the
  // ELF symbol perf names). Exactly one frame, with an empty function, when nothing names it.
  // Valid until the next Find/FindKernel; the strings they point to live as long as the
  // Symbolizer.
  std::span<const Frame> frames;
  // The kernel module a kernel address lies in ("[ext4]"), "" otherwise.
  std::string_view module;
};

// How one file (or the kernel) was found, for a report's summary.
struct FileReport {
  std::string recorded_path;    // the path the recording names ("[kernel.kallsyms]" for the kernel)
  std::string build_id;         // hex; empty when the recording has none
  std::string found_at;         // the file read for the mapping ("" when none)
  std::string found_how;        // see SourceName: "path", "proc-root", "map-files", "buildid-cache", "own-vdso", ...
  std::string symbols_from;     // the file the symbol table came from ("" when none)
  std::string symbols_how;      // "path", "debuglink", "debug-build-id", "debug-path", "buildid-cache", "kallsyms", ...
  std::string symbol_tables;    // ".symtab", ".dynsym", ".plt", ".gnu_debugdata", joined by "+"
  std::string debug_info_from;  // the file DWARF came from ("" when none)
  std::string problem;          // why something was not used or not found; "" when none
  uint64_t lookups = 0;
  uint64_t named = 0;
};

struct Options {
  // perf's build-id cache: "" means $PERF_BUILDID_DIR, else $HOME/.debug (perf's default).
  std::string buildid_dir;
  // Where separate debug files are installed (perf's /usr/lib/debug).
  std::vector<std::string> debug_dirs{"/usr/lib/debug"};
  // Prefix for every host path looked at (tests; perf's --symfs). "" is /.
  std::string root;
  // DWARF inline chains and lines; off: ELF symbols only.
  bool inline_chains = true;
  // DWARF held open at once (debug sections in memory, decompressed), least recently used
  // closed first; a file whose DWARF alone is larger gets symbols only (Files() says so).
  uint64_t max_dwarf_bytes = 1ull << 30;
  size_t max_open_dwarf = 32;  // open debug files (descriptors) at once
  // The running kernel, read when the recording's kernel may be this one.
  std::string kallsyms = "/proc/kallsyms";
  std::string kernel_notes = "/sys/kernel/notes";
  // "" reads uname's release.
  std::string os_release;
};

class Symbolizer {
 public:
  explicit Symbolizer(Options options = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Which kernel the recording ran on: before the first FindKernel (and before lookups in
  // [vdso] without a build id, which use this process's vdso only on the same kernel).
  void SetRecordingKernel(const Kernel& kernel);

  // User-space code. `address` is the absolute address perf gives (a sample's ip, a call chain
  // entry): its file offset is address - start + pgoff (perf's map_ip), which the file's
  // PT_LOAD headers turn into the ELF address for DWARF. perf names a caller frame at its
  // return address: pass that for perf's name, or the return address - 1 for the call's line.
  Lookup Find(const Mapping& mapping, uint64_t address);

  // Kernel code (an address perf attributes to [kernel.kallsyms] or a module).
  Lookup FindKernel(uint64_t address);
  // The kernel addresses the next FindKernel calls will ask for, all of them: the kernel's
  // symbols are then read only for those (KallsymsWanted), until the next Release. Any other
  // address still gets its name, from the whole file read again.
  void WantKernel(std::vector<uint64_t> addresses);

  // Every file looked up so far (and the kernel), in the order first asked for.
  std::vector<FileReport> Files() const;

  // Frees what the lookups so far read (symbol tables, DWARF, kallsyms, the names handed out:
  // earlier Lookups' views are invalid after it), keeping what Files() reports. A file asked
  // for again is read again. A caller that asks file by file releases each before the next,
  // so that one file's tables are in memory at a time, not every file's at once.
  void Release();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace jitdump::symbols
