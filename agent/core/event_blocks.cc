// Recycled event memory (event_blocks.h).
#include "agent/core/event_blocks.h"

#include <bit>
#include <cstdlib>

namespace jitdump_agent {

EventBlocks::EventBlocks() = default;

void EventBlocks::Release() {
  for (int cls = 0; cls < kClasses; ++cls) {
    void* block = nullptr;
    while (free_[cls].blocks.pop(block)) {
      pooled_bytes_.fetch_sub(size_t{1} << (cls + kMinShift), std::memory_order_relaxed);
      std::free(block);
    }
  }
}

int EventBlocks::ClassOf(size_t bytes) {
  const int shift = bytes <= (size_t{1} << kMinShift) ? kMinShift : static_cast<int>(std::bit_width(bytes - 1));
  return shift <= kMaxShift ? shift - kMinShift : -1;
}

size_t EventBlocks::BlockSize(size_t bytes) {
  const int cls = ClassOf(bytes);
  return cls < 0 ? bytes : size_t{1} << (cls + kMinShift);
}

void* EventBlocks::Take(size_t bytes) {
  const int cls = ClassOf(bytes);
  if (cls < 0) return std::malloc(bytes);
  void* block = nullptr;
  if (free_[cls].blocks.pop(block)) {
    pooled_bytes_.fetch_sub(size_t{1} << (cls + kMinShift), std::memory_order_relaxed);
    return block;
  }
  return std::malloc(size_t{1} << (cls + kMinShift));
}

void EventBlocks::Give(void* block, size_t bytes) {
  if (block == nullptr) return;
  const int cls = ClassOf(bytes);
  if (cls >= 0) {
    const uint64_t size = uint64_t{1} << (cls + kMinShift);
    if (pooled_bytes_.fetch_add(size, std::memory_order_relaxed) + size <= kMaxPooledBytes) {
      try {
        if (free_[cls].blocks.push(block)) return;
      } catch (...) {  // no memory for a list node: the block goes back to malloc
      }
    }
    pooled_bytes_.fetch_sub(size, std::memory_order_relaxed);
  }
  std::free(block);
}

}  // namespace jitdump_agent
