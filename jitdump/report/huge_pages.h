// Memory for the report's large hash tables that every frame probes at random (the flat tables:
// the raw frame cache above all): 2 MiB-aligned and advised for transparent huge pages
// (MADV_HUGEPAGE; Debian's THP mode is "madvise"). On this VM a probe into megabytes of 4 KiB
// pages mostly missed the TLB and its nested page walk (the probe's load was 84 % of the
// insert's samples in a cpu-clock profile); with huge pages the bench's report faulted 3,600
// times less and took about 2 % less CPU (docs/measurements.md). Smaller blocks come from the
// allocator as usual. Without THP (or with the advice refused) the pages stay 4 KiB: nothing
// here can fail the report but the allocation itself.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace jitdump::report {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` (at least kHugePageBytes) rounded up to whole huge pages, aligned to one and advised;
// throws std::bad_alloc. Freed by FreeHuge.
void* AllocateHuge(size_t bytes);
void FreeHuge(void* block) noexcept;

struct HugeDeleter {
  void operator()(void* block) const noexcept { FreeHuge(block); }
};

// A standard allocator whose blocks of kHugePageBytes or more are AllocateHuge's.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (n * sizeof(T) < kHugePageBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(AllocateHuge(n * sizeof(T)));
  }
  void deallocate(T* block, size_t n) noexcept {
    if (n * sizeof(T) < kHugePageBytes) return std::allocator<T>().deallocate(block, n);
    FreeHuge(block);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace jitdump::report
