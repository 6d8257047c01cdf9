#include "jitdump/report/batch_malloc.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

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

}  // namespace

void TuneMallocForBatchRun() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, -1);       // never trim the heap's top (-1: the largest size)
  mallopt(M_TOP_PAD, static_cast<int>(kHeapStep));  // grow the heap a large step at a time
  AdviseHeapHugePages();
}

}  // namespace jitdump::report
