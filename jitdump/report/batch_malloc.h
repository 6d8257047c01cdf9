// glibc's malloc tuned for a short batch run that builds large tables and exits (jitdump
// report): by default glibc serves each allocation over 128 KiB (raised up to 32 MiB as such
// blocks are freed) with its own mmap, and gives freed heap back to the kernel, so every time
// one of the report's big vectors grows, its new block is mapped, faulted in page by page, and
// unmapped again when the next growth frees it. Kept on the heap and never trimmed, freed
// blocks are reused as they are. The cost is that the process keeps its peak heap until it
// exits, which a batch run does soon.
//
// Measured on the 37.5 MB -g reference recording (docs/measurements.md): about 0.17 s less
// user+sys CPU of 1.9 s, 1 MB more peak RSS.
#pragma once

#include <malloc.h>

namespace jitdump::report {

inline void TuneMallocForBatchRun() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // blocks below 1 GiB come from the heap
  mallopt(M_TRIM_THRESHOLD, -1);       // never trim the heap's top (-1: the largest size)
  mallopt(M_TOP_PAD, 64 << 20);        // grow the heap 64 MiB at a time: fewer brk calls
}

}  // namespace jitdump::report
