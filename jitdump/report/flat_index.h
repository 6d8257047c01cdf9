// An open-addressing hash index from a 64+32-bit key to a 32-bit value: the report's per-frame
// caches (frame address -> profile location), which every frame of every sample looks up.
// One flat array, linear probing, no allocation per entry, power-of-two capacity grown at half
// full: a lookup is one or two cache lines, where std::unordered_map chases a node per entry.
#pragma once

#include <cstdint>
#include <vector>

namespace jitdump::report {

// A 64-bit finalizer (MurmurHash3's fmix64): spreads every bit of `h` over the low bits that pick
// a power-of-two table's slot. The report's flat indexes hash their keys through it.
inline uint64_t MixBits(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

class FlatIndex {
 public:
  struct Entry {
    uint64_t a = 0;
    uint32_t b = 0;
    uint32_t value = 0;
    bool used = false;
  };

  // The entry for (a, b), or null.
  Entry* Find(uint64_t a, uint32_t b) {
    if (size_ == 0) return nullptr;
    for (size_t i = Slot(a, b);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) return nullptr;
      if (e.a == a && e.b == b) return &e;
    }
  }

  // The entry for (a, b), made (value 0) when new; `inserted` says which.
  Entry& Insert(uint64_t a, uint32_t b, bool* inserted) {
    if (2 * (size_ + 1) > entries_.size()) Grow();
    for (size_t i = Slot(a, b);; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) {
        e.used = true;
        e.a = a;
        e.b = b;
        e.value = 0;
        ++size_;
        *inserted = true;
        return e;
      }
      if (e.a == a && e.b == b) {
        *inserted = false;
        return e;
      }
    }
  }

  size_t size() const { return size_; }
  // Empties the index and frees its memory.
  void clear() {
    entries_ = std::vector<Entry>();
    size_ = 0;
    mask_ = 0;
  }

 private:
  size_t Slot(uint64_t a, uint32_t b) const {
    return static_cast<size_t>(MixBits(a ^ (uint64_t{b} << 47 | uint64_t{b} >> 17))) & mask_;
  }

  void Grow() {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.resize(old.empty() ? 1024 : 2 * old.size());
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (!e.used) continue;
      bool inserted;
      Insert(e.a, e.b, &inserted).value = e.value;
    }
  }

  std::vector<Entry> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace jitdump::report
