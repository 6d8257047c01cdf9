// Open-addressing hash tables for the report's per-frame caches (frame address -> profile
// location), which every frame of every sample looks up. One flat array, linear probing, no
// allocation per entry, power-of-two capacity grown at half full: a lookup is one or two cache
// lines, where std::unordered_map chases a node per entry. A table of megabytes is on huge
// pages (huge_pages.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jitdump/report/huge_pages.h"

namespace jitdump::report {

// A 64-bit finalizer (MurmurHash3's fmix64): spreads every bit of `h` over the low bits that pick
// a power-of-two table's slot. The report's flat tables hash their keys through it.
inline uint64_t MixBits(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

// The table, over entries that hold their own key. `Entry` provides:
//   bool used;                          false in an empty slot (a value-initialized Entry)
//   bool Is(const Key&) const;          whether the entry is the key's
//   Key key() const;                    its key (to file it again when the table grows)
//   static Entry Of(const Key&);        a new entry for the key: used, the rest zero
//   static uint64_t Hash(const Key&);   spread over all 64 bits (MixBits)
template <typename Entry, typename Key, size_t kInitialSlots>
class FlatTable {
  static_assert((kInitialSlots & (kInitialSlots - 1)) == 0, "a power of two");

 public:
  // The entry for `key`, or null.
  Entry* Find(const Key& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = Entry::Hash(key) & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) return nullptr;
      if (e.Is(key)) return &e;
    }
  }

  // The entry for `key`, made by Entry::Of when new; `inserted` says which.
  Entry& Insert(const Key& key, bool* inserted) {
    if (2 * (size_ + 1) > entries_.size()) Grow();
    for (size_t i = Entry::Hash(key) & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used) {
        e = Entry::Of(key);
        ++size_;
        *inserted = true;
        return e;
      }
      if (e.Is(key)) {
        *inserted = false;
        return e;
      }
    }
  }

  size_t size() const { return size_; }
  // Empties the table and frees its memory.
  void clear() {
    entries_ = std::vector<Entry, HugePageAllocator<Entry>>();
    size_ = 0;
    mask_ = 0;
  }

 private:
  void Grow() {
    std::vector<Entry, HugePageAllocator<Entry>> old;
    old.swap(entries_);
    entries_.resize(old.empty() ? kInitialSlots : 2 * old.size());
    mask_ = entries_.size() - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (!e.used) continue;
      bool inserted;
      Insert(e.key(), &inserted) = e;
    }
  }

  std::vector<Entry, HugePageAllocator<Entry>> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// A 64+32-bit key to a 32-bit value.
struct FlatIndexKey {
  uint64_t a = 0;
  uint32_t b = 0;
};

struct FlatIndexEntry {
  uint64_t a = 0;
  uint32_t b = 0;
  uint32_t value = 0;
  bool used = false;

  bool Is(const FlatIndexKey& key) const { return a == key.a && b == key.b; }
  FlatIndexKey key() const { return {a, b}; }
  static FlatIndexEntry Of(const FlatIndexKey& key) { return {key.a, key.b, 0, true}; }
  static uint64_t Hash(const FlatIndexKey& key) {
    return MixBits(key.a ^ (uint64_t{key.b} << 47 | uint64_t{key.b} >> 17));
  }
};

class FlatIndex : public FlatTable<FlatIndexEntry, FlatIndexKey, 1024> {
 public:
  using Entry = FlatIndexEntry;
  using FlatTable::Find;
  using FlatTable::Insert;
  Entry* Find(uint64_t a, uint32_t b) { return Find(FlatIndexKey{a, b}); }
  // The entry for (a, b), made (value 0) when new.
  Entry& Insert(uint64_t a, uint32_t b, bool* inserted) { return Insert(FlatIndexKey{a, b}, inserted); }
};

}  // namespace jitdump::report
