#include "jitdump/report/batch_malloc.h"

#include <dirent.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#if __has_include(<mimalloc.h>)
#include <mimalloc.h>
// Weak: the jitdump executable links mimalloc (jitdump/tool/meson.build); the tests, the fuzzers
// and sanitizer builds do not, and keep glibc's malloc.
#pragma weak mi_option_set
#pragma weak mi_is_in_heap_region
#define JITDUMP_KNOWS_MIMALLOC 1
#endif

namespace jitdump::report {
namespace {

constexpr size_t kHeapStep = size_t{256} << 20;  // virtual: only what is touched is resident
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// Grows the heap by kHeapStep now (a block larger than the heap's free top makes malloc extend
// it by the block plus M_TOP_PAD) and advises the new range for huge pages. Nothing here can
// fail the report: without THP (or with madvise refused) pages stay 4 KiB.
void AdviseHeapHugePages() {
  void* probe = std::malloc(size_t{1} << 20);
  if (probe == nullptr) return;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(probe) + kHugePage - 1) & ~(kHugePage - 1);
  std::free(probe);  // back into the top of the heap, which is never trimmed
  const uintptr_t end = reinterpret_cast<uintptr_t>(::sbrk(0)) & ~(kHugePage - 1);
  if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

#ifdef JITDUMP_KNOWS_MIMALLOC
// Advises the anonymous mapping that holds `block` for transparent huge pages: its line in
// /proc/self/maps, read whole (a mapped file's path, which another user may have chosen, ends a
// line and cannot start one). Nothing here can fail the report: without the file, the line or
// THP the pages stay 4 KiB.
void AdviseMappingHolding(const void* block) {
  std::ifstream maps("/proc/self/maps");
  const uintptr_t address = reinterpret_cast<uintptr_t>(block);
  for (std::string line; std::getline(maps, line);) {
    uintptr_t start = 0;
    uintptr_t end = 0;
    char perms[5] = {};
    unsigned long long inode = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %llu", &start, &end, perms, &inode) != 4) {
      continue;
    }
    if (address < start || address >= end) continue;
    const bool anonymous_and_writable = inode == 0 && perms[0] == 'r' && perms[1] == 'w';
    if (anonymous_and_writable) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
    return;
  }
}

// Whether the kernel keeps a pool of hugetlbfs pages of any size, or may: mimalloc's large-page
// option maps from that pool first (MAP_HUGETLB) and falls back to transparent huge pages only
// when it is empty, and those pages are the ones a host's administrator set aside for its
// services (a JVM's -XX:+UseLargePages, a database). Unknown (no sysfs) counts as a pool.
bool HugetlbPoolConfigured() {
  DIR* pools = ::opendir("/sys/kernel/mm/hugepages");
  if (pools == nullptr) return errno != ENOENT;  // ENOENT: a kernel without hugetlbfs
  bool configured = false;
  while (const dirent* pool = ::readdir(pools)) {
    if (std::string_view(pool->d_name).substr(0, 10) != "hugepages-") continue;
    for (const char* count : {"nr_hugepages", "nr_overcommit_hugepages"}) {
      std::ifstream file(std::string("/sys/kernel/mm/hugepages/") + pool->d_name + "/" + count);
      unsigned long long pages = 0;
      if (!(file >> pages) || pages != 0) configured = true;
    }
  }
  ::closedir(pools);
  return configured;
}

// Whether mimalloc serves this process's malloc (linked and interposed), not only loaded.
bool MimallocServesMalloc() {
  if (mi_is_in_heap_region == nullptr || mi_option_set == nullptr) return false;
  void* probe = std::calloc(1, 64);  // calloc: the check takes a pointer to const, which GCC takes for a read
  const bool ours = probe != nullptr && mi_is_in_heap_region(probe);
  std::free(probe);
  return ours;
}

// What mimalloc frees stays committed for reuse instead of going back to the kernel (which
// would hand back freshly zeroed pages), and its memory is on transparent huge pages: the
// segments it maps from now on (mi_option_large_os_pages) and the one it mapped before main()
// could set the option, which serves the report's small blocks (found by a block of its own).
// On the bench's recording the report took 0.74 s of CPU with 4 KiB pages (~13,500 page
// faults; on this project's paravirtualized VMs the kernel's fault handling was the largest
// item of a profile), 0.555 s on huge pages (~800 faults, 3 MiB more peak RSS;
// docs/measurements.md). The option alone left ~9,000 faults, in that first segment; without it
// (on a host with a hugetlbfs pool) ~6,500 remain.
bool TuneMimalloc() {
  if (!MimallocServesMalloc()) return false;
#if MI_MALLOC_VERSION >= 210
  mi_option_set(mi_option_purge_delay, -1);  // 2.1 renamed decommitting to purging
#else
  mi_option_set(mi_option_allow_decommit, 0);
  // The segment mapped before main() was made allowed to decommit, and 2.0 decommits what is
  // freed in it 25 ms later (MADV_DONTNEED, whatever allow_decommit now says): the report then
  // faulted those ranges back a 4 KiB page at a time (1,272 faults in the line table's phase
  // of one run, its 11 ms becoming 39). Delayed past any report's end, it never happens.
  mi_option_set(mi_option_decommit_delay, long{1} << 40);  // milliseconds: 34 years
#endif
  if (!HugetlbPoolConfigured()) mi_option_set(mi_option_large_os_pages, 1);
  if (void* small = std::malloc(64); small != nullptr) {
    AdviseMappingHolding(small);
    std::free(small);
  }
  return true;
}
#endif

}  // namespace

void TuneMallocForBatchRun() {
#ifdef JITDUMP_KNOWS_MIMALLOC
  if (TuneMimalloc()) return;
#endif
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, -1);       // never trim the heap's top (-1: the largest size)
  mallopt(M_TOP_PAD, static_cast<int>(kHeapStep));  // grow the heap a large step at a time
  AdviseHeapHugePages();
}

}  // namespace jitdump::report
