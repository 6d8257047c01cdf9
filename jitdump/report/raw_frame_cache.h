// What each raw frame of a perf.data sample resolved to, keyed by what the sample says before
// anything is looked up: the process, the address, the cpumode and where in the stack it is
// (first, or after a kernel frame: what decides whether it is a return address). A frame seen
// before then costs one probe of one flat array instead of a mapping search, a DSO's rules and
// the location indexes. Every entry says what its answer depends on (the address spaces'
// generation, the JVM and its code map's epoch), which the reader checks before it trusts it.
//
// Open addressing, linear probing, power-of-two capacity grown at half full, 32-byte entries
// (two to a cache line: the probe is the cost of a hit); memory follows the distinct raw frames
// of the recording.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jitdump/report/flat_index.h"

namespace jitdump::report {

class RawFrameCache {
 public:
  struct Key {
    uint64_t ip = 0;
    uint32_t pid = 0;
    uint8_t cpumode = 0;
    uint8_t position = 0;  // the reader's: first frame, after a kernel frame
  };
  struct Entry {
    uint64_t ip = 0;
    uint32_t pid = 0;
    uint8_t cpumode = 0;
    uint8_t position = 0;
    bool used = false;
    uint8_t flags = 0;        // the reader's
    uint32_t location = 0;
    uint32_t jvm = 0;         // the reader's JVM index it was resolved for, when that matters
    uint32_t generation = 0;  // AddressSpaces::FindGeneration when it was resolved or checked
    uint32_t epoch = 0;       // LoadTimeline::Epoch when it was resolved, when that matters
    bool Is(const Key& key) const {
      return ip == key.ip && pid == key.pid && cpumode == key.cpumode && position == key.position;
    }
  };

  // The entry for `key`, or null.
  Entry* Find(const Key& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) return nullptr;
      if (e.Is(key)) return &e;
    }
  }

  // The entry for `key`, made empty (used, every other field 0) when new.
  Entry& Insert(const Key& key) {
    if (2 * (size_ + 1) > entries_.size()) Grow();
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) {
        e = Entry{};
        e.ip = key.ip;
        e.pid = key.pid;
        e.cpumode = key.cpumode;
        e.position = key.position;
        e.used = true;
        ++size_;
        return e;
      }
      if (e.Is(key)) return e;
    }
  }

  size_t size() const { return size_; }
  void clear() {
    entries_ = std::vector<Entry>();
    size_ = 0;
    mask_ = 0;
  }

 private:
  size_t Slot(const Key& key) const {
    const uint64_t bits = key.ip ^ (uint64_t{key.pid} << 32 | uint64_t{key.cpumode} << 8 | key.position);
    return static_cast<size_t>(MixBits(bits)) & mask_;
  }

  void Grow() {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.resize(old.empty() ? 4096 : 2 * old.size());
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.used) Insert(Key{e.ip, e.pid, e.cpumode, e.position}) = e;
    }
  }

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

static_assert(sizeof(RawFrameCache::Entry) == 32);

}  // namespace jitdump::report
