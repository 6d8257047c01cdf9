// The last frame-pointer stack of each thread, with what each of its frames resolved to. A
// thread's next sample mostly shares the frames nearest the root with its last one (the thread's
// run loop, the request dispatch, ...: 56 % of the frames of a 176,376-sample HTTP recording),
// and those resolve as they did then while nothing they depend on changed: comparing the two
// stacks from the root, in order, costs less than a probe of the raw frame cache per frame (a
// cache miss in a table of megabytes).
//
// Direct-mapped by tid: a thread whose slot another one took starts over, so memory stays at
// kSlots stacks whatever the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace jitdump::report {

class LastStacks {
 public:
  static constexpr size_t kSlots = 1024;

  struct Frame {
    uint64_t ip = 0;
    uint32_t location = 0;
    uint16_t cpumode = 0;
    uint8_t flags = 0;     // the reader's (profile_reader.cc: RawFlag)
    uint8_t position = 0;  // the reader's cache key position, | kReusable when the result may be reused
  };
  static constexpr uint8_t kReusable = 1 << 7;

  struct Stack {
    uint32_t tid = UINT32_MAX;  // the thread whose stack this is; UINT32_MAX: none yet
    uint32_t pid = 0;
    uint32_t jvm = 0;          // the reader's JVM index the frames were resolved for
    uint64_t generation = 0;   // the process's mappings' generation they were resolved or checked at
    uint64_t epoch = 0;        // the JVM code map's epoch, when has_epoch
    bool has_epoch = false;
    std::vector<Frame> frames;  // leaf first
  };

  // `tid`'s slot: its last stack when `tid` holds it (else another thread's, or none).
  Stack& Slot(uint32_t tid) {
    if (slots_.empty()) slots_.resize(kSlots);
    return slots_[tid % kSlots];
  }

  // How many frames at the root end of `frames` equal (address and cpumode) those at the root
  // end of `last`, each reusable; `ip` and `cpumode` are read from each element of `frames`.
  template <typename RawFrameT>
  static size_t CommonRoot(const std::vector<Frame>& last, std::span<const RawFrameT> frames) {
    size_t n = 0;
    const size_t most = last.size() < frames.size() ? last.size() : frames.size();
    const Frame* a = last.data() + last.size();
    const RawFrameT* b = frames.data() + frames.size();
    while (n < most) {
      const Frame& x = *--a;
      const RawFrameT& y = *--b;
      if (x.ip != y.ip || x.cpumode != y.cpumode || (x.position & kReusable) == 0) break;
      ++n;
    }
    return n;
  }

  // Forgets every stack and frees the memory.
  void clear() { slots_ = std::vector<Stack>(); }

 private:
  std::vector<Stack> slots_;  // kSlots once the first is asked for
};

}  // namespace jitdump::report
