// Where the files of a recording's mappings are on this machine, and opening them safely:
// the host's paths (under an optional root prefix), a live process's own root for a container's
// files (/proc/PID/root, resolved with openat2's RESOLVE_IN_ROOT so that the container's
// symlinks stay inside it even when root reads them), /proc/PID/map_files for files deleted
// since they were mapped, perf's build-id cache (~/.debug/.build-id/xx/rest/{elf,debug,vdso}
// and ~/.debug/[kernel.kallsyms]/ID/kallsyms) and this process's own vdso.
//
// Only regular files are opened (O_NONBLOCK: a FIFO planted at a path never blocks), and every
// opened file is only parsed, never executed or written.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {

// How a file was found (the strings a report shows).
enum class Source : uint8_t {
  kNone,
  kPath,               // the recorded path on this machine
  kProcRoot,           // /proc/PID/root + path: a container's file, while the process lives
  kMapFiles,           // /proc/PID/map_files/START-END: the mapped file itself (deleted ones too)
  kBuildIdCache,       // perf's build-id cache: the copy `perf record` made
  kBuildIdCacheDebug,  // perf's build-id cache: a debug file put there
  kOwnVdso,            // this process's vdso (the same kernel)
  kDebuglink,          // .gnu_debuglink: DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME
  kDebugBuildId,       // /usr/lib/debug/.build-id/xx/rest.debug
  kDebugPath,          // /usr/lib/debug/PATH(.debug), DIR/.debug/BASENAME
  kKallsyms,           // /proc/kallsyms
  kKallsymsCache,      // perf's build-id cache: [kernel.kallsyms]/ID/kallsyms
};
const char* SourceName(Source source);

class FileLocator {
 public:
  FileLocator(std::string root, std::string buildid_dir);

  const std::string& buildid_dir() const { return buildid_dir_; }

  // `path` (absolute) under the root prefix.
  std::string HostPath(std::string_view path) const { return root_ + std::string(path); }
  std::unique_ptr<ElfImage> OpenHost(std::string_view path, std::string* error) const;

  // Whether `pid` lives in another mount namespace or under another root than ours (a
  // container); false when it is gone. Remembered per pid.
  bool HasOtherRoot(uint32_t pid);
  // `path` inside the process's root, symlinks resolved within it.
  std::unique_ptr<ElfImage> OpenInProcessRoot(uint32_t pid, std::string_view path, std::string* error) const;
  // The file the process has mapped at [start, end) (needs root).
  std::unique_ptr<ElfImage> OpenMapFiles(uint32_t pid, uint64_t start, uint64_t end, std::string* error) const;
  static std::string MapFilesPath(uint32_t pid, uint64_t start, uint64_t end);

  // perf's build-id cache: "<dir>/.build-id/xx/rest" + "/" + `kind` ("elf", "debug", "vdso"),
  // or the old layout's file itself.
  std::string BuildIdCachePath(std::span<const uint8_t> build_id, std::string_view kind) const;
  std::string KallsymsCachePath(std::span<const uint8_t> build_id) const;

  // This process's vdso image, copied ({} when it has none).
  static std::vector<uint8_t> OwnVdso();

 private:
  std::string root_;
  std::string buildid_dir_;
  std::unordered_map<uint32_t, bool> other_root_;
};

// perf's default build-id cache: $PERF_BUILDID_DIR, else $HOME/.debug; "" when neither is set.
std::string DefaultBuildIdDir();

}  // namespace jitdump::symbols
