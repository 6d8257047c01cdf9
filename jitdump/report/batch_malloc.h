// The allocator tuned for a short batch run that builds large tables and exits (jitdump report).
//
// The jitdump executable's allocator is mimalloc (linked in jitdump/tool/meson.build): the report
// makes and frees ~800,000 small blocks (names, inline chains, the profile's samples), which cost
// glibc's malloc 6 % of the report's instructions more than mimalloc. What it frees then stays
// committed for reuse, and its memory is advised for transparent huge pages (batch_malloc.cc).
//
// Where glibc's malloc serves (the tests, sanitizer builds): by default it serves each
// allocation over 128 KiB (raised up to 32 MiB as such blocks are freed) with its own mmap, and
// gives freed heap back to the kernel, so every time one of the report's big vectors grows, its
// new block is mapped, faulted in page by page, and unmapped again when the next growth frees it.
// Kept on the heap and never trimmed, freed blocks are reused as they are. The cost is that the
// process keeps its peak heap until it exits, which a batch run does soon. The heap is then grown
// once by a large step and that range is advised for transparent huge pages (where the kernel's
// THP mode is "madvise", Debian's default): the report's tables are touched all over, and with
// 4 KiB pages the page faults and TLB misses cost about a sixth of its CPU. This is what glibc's
// own GLIBC_TUNABLES=glibc.malloc.hugetlb=1 does, which a program cannot set for itself once
// started.
//
// Measured on the 37.5 MB -g reference recording (docs/measurements.md).
#pragma once

namespace jitdump::report {

void TuneMallocForBatchRun();

}  // namespace jitdump::report
