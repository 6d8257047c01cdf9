// Open-addressing hash tables for the report's per-frame caches (frame address -> profile
// location), which every frame of every sample looks up. One flat array, linear probing, no
// allocation per entry, power-of-two capacity grown at half full: a lookup is one or two cache
// lines, where std::unordered_map chases a node per entry. A table of megabytes is on huge
// pages (huge_pages.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
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
//   bool used() const;                  false in an empty slot (a value-initialized Entry)
//   bool Is(const Key&) const;          whether the entry is the key's
//   Key key() const;                    its key (to file it again when the table grows)
//   static Entry Of(const Key&);        a new entry for the key: used, the rest zero
//   static uint64_t Hash(const Key&);   spread over all 64 bits (MixBits)
// The table doubles when an insert would fill more than kMaxLoadQuarters quarters of it: half
// (2) where a probe should mostly end in its first slot, three quarters (3) for small entries,
// several of which share a cache line, where memory counts more than a slot or two more a probe.
template <typename Entry, typename Key, size_t kInitialSlots, size_t kMaxLoadQuarters = 2>
class FlatTable {
  static_assert((kInitialSlots & (kInitialSlots - 1)) == 0, "a power of two");
  static_assert(kMaxLoadQuarters >= 1 && kMaxLoadQuarters <= 3, "an empty slot always left");

 public:
  // The entry for `key`, or null.
  Entry* Find(const Key& key) {
    if (size_ == 0) return nullptr;
    for (size_t i = Entry::Hash(key) & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used()) return nullptr;
      if (e.Is(key)) return &e;
    }
  }

  // Asks the CPU to start loading the slot where a Find or Insert of `key` begins: probes of a
  // table of megabytes mostly miss the caches, and several started before the first is needed
  // overlap their waits. A prefetch never faults (an empty table's null is harmless). Always
  // inlined: GCC 12 otherwise finds the function free of side effects and drops its calls.
  [[gnu::always_inline]] void Prefetch(const Key& key) const {
    __builtin_prefetch(entries_.data() + (Entry::Hash(key) & mask_));
  }

  // The entry for `key`, made by Entry::Of when new; `inserted` says which.
  Entry& Insert(const Key& key, bool* inserted) {
    if (4 * (size_ + 1) > kMaxLoadQuarters * entries_.size()) Grow();
    for (size_t i = Entry::Hash(key) & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.used()) {
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
      if (!e.used()) continue;
      bool inserted;
      Insert(e.key(), &inserted) = e;
    }
  }

  std::vector<Entry, HugePageAllocator<Entry>> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// A 64+32-bit key to a 31-bit value, in 16 bytes (four to a cache line): the value's top bit
// says the slot is taken. The values are indexes of the report's locations and frame caches,
// whose 2^31st element would need tens of gigabytes first; one beyond is refused, not wrapped.
struct FlatIndexKey {
  uint64_t a = 0;
  uint32_t b = 0;
};

struct FlatIndexEntry {
  static constexpr uint32_t kMaxValue = UINT32_MAX >> 1;

  uint64_t a = 0;
  uint32_t b = 0;

  uint32_t value() const { return value_and_used_ & kMaxValue; }
  // Throws std::length_error past kMaxValue.
  void set_value(uint32_t value) {
    if (value > kMaxValue) throw std::length_error("more than 2^31 distinct frames");
    value_and_used_ = value | kUsed;
  }
  bool used() const { return (value_and_used_ & kUsed) != 0; }
  bool Is(const FlatIndexKey& key) const { return a == key.a && b == key.b; }
  FlatIndexKey key() const { return {a, b}; }
  static FlatIndexEntry Of(const FlatIndexKey& key) {
    FlatIndexEntry e;
    e.a = key.a;
    e.b = key.b;
    e.value_and_used_ = kUsed;
    return e;
  }
  static uint64_t Hash(const FlatIndexKey& key) {
    return MixBits(key.a ^ (uint64_t{key.b} << 47 | uint64_t{key.b} >> 17));
  }

 private:
  static constexpr uint32_t kUsed = uint32_t{1} << 31;
  uint32_t value_and_used_ = 0;
};

static_assert(sizeof(FlatIndexEntry) == 16);

class FlatIndex : public FlatTable<FlatIndexEntry, FlatIndexKey, 1024, /*kMaxLoadQuarters=*/3> {
 public:
  using Entry = FlatIndexEntry;
  using FlatTable::Find;
  using FlatTable::Insert;
  Entry* Find(uint64_t a, uint32_t b) { return Find(FlatIndexKey{a, b}); }
  // The entry for (a, b), made (value 0) when new.
  Entry& Insert(uint64_t a, uint32_t b, bool* inserted) { return Insert(FlatIndexKey{a, b}, inserted); }
};

}  // namespace jitdump::report
