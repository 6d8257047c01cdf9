// What each process had mapped, and what each thread was called, as a recording's side-band
// records tell it (perf's machine/thread/maps model, tools/perf/util/machine.c and map.c):
// MMAP/MMAP2 add a mapping, cutting whatever it overlaps; FORK of a new process copies its
// parent's mappings and comm (a new thread shares its process's); a COMM names a thread; the
// kernel's mappings (kernel cpumode) are shared by all. Fed records in time order, it answers
// "which file was at this address in this process now" the way perf does, and names the file
// the way `perf script` prints it: anonymous executable memory is "/tmp/perf-PID.map", the
// kernel "[kernel.kallsyms]", a module "[name]".
//
// Memory: one entry per live mapping and per thread seen; lookups are a binary search in the
// process's sorted mappings behind a one-entry cache.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/perfdata/recording.h"
#include "jitdump/perfdata/records.h"

namespace jitdump::perfdata {

enum class DsoKind : uint8_t {
  kFile,       // a file: an executable, a library, a jitted-*.so
  kAnonymous,  // anonymous or memfd executable memory (JIT code): perf names it /tmp/perf-PID.map
  kKernel,     // the kernel image
  kModule,     // a kernel module
  kVdso,       // [vdso]
  kNoFile,     // [heap], [stack], SysV shared memory, non-executable anonymous memory
};

// A mapped file (or what stands for one), shared by every mapping of it.
struct Dso {
  std::string path;  // as the record names it: "/usr/lib/libc.so.6", "//anon", "[kernel.kallsyms]_text"
  std::string name;  // as perf script prints it: the path, "/tmp/perf-123.map", "[kernel.kallsyms]", "[ext4]"
  DsoKind kind = DsoKind::kFile;
  std::vector<uint8_t> build_id;  // from MMAP2 or the BUILD_ID feature; empty when unknown
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
};

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;    // exclusive
  uint64_t pgoff = 0;  // the file offset mapped at `start` (for the kernel: the address of _text)
  uint32_t prot = 0;
  const Dso* dso = nullptr;
  // perf's map_ip: the address as an offset into the file (kernel, anonymous: the address).
  uint64_t FileAddress(uint64_t addr) const {
    return dso != nullptr && (dso->kind == DsoKind::kFile || dso->kind == DsoKind::kVdso) ? addr - start + pgoff
                                                                                            : addr;
  }
};

class AddressSpaces {
 public:
  AddressSpaces();
  ~AddressSpaces();
  AddressSpaces(const AddressSpaces&) = delete;
  AddressSpaces& operator=(const AddressSpaces&) = delete;

  // The recording's build ids (BUILD_ID feature): given to the files of those paths.
  void SetBuildIds(const std::vector<BuildIdEntry>& build_ids);

  void OnMmap(const Mmap& mmap);
  void OnComm(const Comm& comm);
  void OnTask(const Task& task);

  // The mapping at `addr` for a sample of `pid` in `cpumode` (kernel cpumodes look in the
  // kernel's mappings; a user address found in none of the process's falls back to the
  // kernel's when it is a kernel address, as perf's thread__find_map_fb does). Null when none.
  const Mapping* Find(uint32_t pid, uint16_t cpumode, uint64_t addr);

  // The process's user mappings, sorted by start; null when it has none.
  const std::vector<Mapping>* Mappings(uint32_t pid) const;
  // Changes whenever the process's mappings change (for caches built from them).
  uint64_t Generation(uint32_t pid) const;
  // Changes whenever the process's or the kernel's mappings change: what Find answers for the
  // process stays the same while this does. Generations only grow.
  uint64_t FindGeneration(uint32_t pid);
  // Whether Find(pid, cpumode, addr) still answers as it did at FindGeneration `since`: no
  // mapping change since then touched the address, or each one that did left it in the same
  // file at the same file offset (a JVM's code cache growing in place). False when that is no
  // longer known (changes older than the last kChangesKept of a space are forgotten).
  bool Unchanged(uint32_t pid, uint16_t cpumode, uint64_t addr, uint64_t since);

  // The thread's comm as perf prints it: the last COMM, or its parent's at FORK; "swapper" for
  // the idle thread (tid 0) and ":TID" (signed) for one the recording never named.
  std::string_view ThreadComm(uint32_t tid);

  size_t processes() const { return processes_.size(); }
  size_t mappings() const;

 private:
  // An address range whose lookups a mapping change altered, at that change's generation.
  struct Change {
    uint64_t generation = 0;
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive
  };
  static constexpr size_t kChangesKept = 64;
  struct Space {
    std::vector<Mapping> maps;  // sorted by start, disjoint
    size_t last = 0;            // the last hit
    uint64_t generation = 0;
    std::vector<Change> changes;  // the latest kChangesKept, oldest first
    uint64_t forgotten = 0;       // the newest generation of a change no longer kept
  };
  const Dso* Intern(const Mmap& mmap, bool kernel);
  // Puts `mapping` in `space` at generation `generation`, noting the range it altered.
  static void Insert(Space& space, const Mapping& mapping, uint64_t generation);
  static void NoteChange(Space& space, uint64_t generation, uint64_t start, uint64_t end);
  static bool UnchangedIn(const Space& space, uint64_t addr, uint64_t since);
  static const Mapping* Lookup(Space& space, uint64_t addr);
  Space* FindSpace(uint32_t pid);
  Space& ProcessSpace(uint32_t pid);

  std::unordered_map<uint32_t, Space> processes_;  // never erased: a Space's address stays
  // The process of the last Find: a sample's frames are all looked up in one process.
  uint32_t last_pid_ = 0;
  Space* last_space_ = nullptr;
  Space kernel_;
  std::unordered_map<std::string, std::unique_ptr<Dso>> dsos_;  // by key (path + inode or build id)
  std::unordered_map<std::string, std::vector<uint8_t>> header_build_ids_;  // by path
  std::unordered_map<uint32_t, std::string> comms_;  // by tid
  // ThreadComm's answers from comms_, by tid modulo the size: every sample asks for its thread's
  // name, and the map's node is a cache miss each time. A node's address stays until it is
  // erased (its slot is cleared then); its string is read through it, so a new COMM shows.
  struct CommMemo {
    uint32_t tid = 0;
    const std::string* comm = nullptr;
  };
  std::array<CommMemo, 256> comm_memo_{};
  std::string default_comm_;
  uint64_t generations_ = 0;
};

// Whether an address is in the upper half of x86-64's (and arm64's) canonical address space,
// where kernels live.
inline bool IsKernelAddress(uint64_t addr) { return (addr >> 63) != 0; }

}  // namespace jitdump::perfdata
