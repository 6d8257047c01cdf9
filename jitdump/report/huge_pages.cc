#include "jitdump/report/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace jitdump::report {

void* AllocateHuge(size_t bytes) {
  if (bytes > SIZE_MAX - kHugePageBytes) throw std::bad_alloc();
  const size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  void* block = std::aligned_alloc(kHugePageBytes, rounded);
  if (block == nullptr) throw std::bad_alloc();
  ::madvise(block, rounded, MADV_HUGEPAGE);  // advice only: refused, the pages stay small
  return block;
}

void FreeHuge(void* block) noexcept { std::free(block); }

}  // namespace jitdump::report
