// Memory for code events, recycled.
//
// Every load's event is one block of a few KiB that a JVM thread fills and the writer frees
// about a poll later. Through malloc and free, each freed block lands in glibc's unsorted bin,
// and the writer's next malloc sorts them into bins: on javac that was a third of the writer's
// samples (docs/measurements.md). Here a block of a power-of-two size class
// goes back on that class's lock-free free list, and the next event of the class takes it.
// Bounded: at most kMaxPooledBytes wait on the lists; beyond that, and for events larger than
// the largest class, blocks come from malloc and go back to free as before. Taking or giving a
// pooled block never locks or waits (a Boost.Lockfree stack; giving may allocate a list node,
// on the writer).
#pragma once

#include <boost/lockfree/stack.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace jitdump_agent {

class EventBlocks {
 public:
  static constexpr int kMinShift = 9;   // 512 bytes: the smallest class (an unload's event)
  static constexpr int kMaxShift = 16;  // 64 KiB: the largest; javac's loads are ~2-8 KiB
  static constexpr uint64_t kMaxPooledBytes = 1 << 20;  // about what the writer drains at a time

  EventBlocks();
  ~EventBlocks() { Release(); }
  EventBlocks(const EventBlocks&) = delete;
  EventBlocks& operator=(const EventBlocks&) = delete;

  // The size of the block that holds `bytes`: its class's size, or `bytes` beyond the largest.
  static size_t BlockSize(size_t bytes);
  // A block of BlockSize(bytes) bytes, or nullptr when there is no memory.
  void* Take(size_t bytes);
  // Returns a block Take(bytes) handed out.
  void Give(void* block, size_t bytes);
  uint64_t pooled_bytes() const { return pooled_bytes_.load(std::memory_order_relaxed); }
  // Frees every pooled block (the session is over; its writer frees what it kept).
  void Release();

 private:
  static constexpr int kClasses = kMaxShift - kMinShift + 1;
  // The class of a block of `bytes`, or -1 beyond the largest.
  static int ClassOf(size_t bytes);
  struct FreeList {
    FreeList() : blocks(16) {}
    boost::lockfree::stack<void*> blocks;
  };
  FreeList free_[kClasses];
  std::atomic<uint64_t> pooled_bytes_{0};
};

}  // namespace jitdump_agent
