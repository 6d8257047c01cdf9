// The distinct stacks of a profile while it is built: each (process, thread, stack of location
// indexes) once, with the samples and CPU time counted for it, in the order first added.
//
// Every sample of a recording comes here, so what a sample costs is what matters: a stack seen
// before costs a hash, one probe of a table of 8-byte slots and one comparison of a record that
// holds everything about the stack (its counts, process, thread and locations) in one place, so
// a repeated sample touches two places in memory and allocates nothing (AddLater asks for the
// first of them, its slot, a sample ahead).
//
// And every distinct stack is kept until the profile is made, at the report's peak of memory,
// so they are kept small: the locations in 16 bits each when all of a stack's fit (a recording
// rarely has 65,536 distinct locations: the 37.5 MB reference one has 52,419), else 32; the
// records in 1 MiB chunks that are never copied to grow (no vector doubling: no second copy, no
// spare capacity).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace jitdump::report {

class StackTable {
 public:
  struct Stack {
    uint32_t process = 0;
    uint32_t thread = 0;
    uint64_t count = 0;
    uint64_t nanos = 0;
  };

  // Adds `count` samples and `nanos` of CPU time to the stack (leaf first), made when new.
  void Add(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count, uint64_t nanos);

  // Add, carried out at the next AddLater or Flush: the stack's slot is asked for from memory
  // now, and arrives while the caller reads its next sample (each sample's slot is a cache miss
  // in a table of megabytes). size(), record_bytes(), Get() and SortByPath() see a stack once
  // flushed (SortByPath flushes).
  void AddLater(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                uint64_t nanos);
  void Flush();
  // Frees the table of slots that finds a stack again (1 MB for 96,584 stacks), once every stack
  // has been added: size(), Get() and SortByPath() still see them all; Add and AddLater throw
  // after it.
  void ReleaseSlots();

  // Distinct stacks so far.
  size_t size() const { return records_.size(); }
  // Bytes their records take (headers, locations, padding, and the unused ends of chunks).
  uint64_t record_bytes() const { return end_; }
  // The `i`th stack made (0 first), or the `i`th in path order after SortByPath, its locations
  // into `locations` (replacing what it held).
  Stack Get(size_t i, std::vector<uint32_t>* locations) const;

  // Asks for the `i`th stack's record ahead of Get (nothing when there is none).
  [[gnu::always_inline]] void Prefetch(size_t i) const {
    if (i < records_.size()) PrefetchRecord(records_[i]);
  }

  // Puts the stacks in the order of their paths: process, then locations outermost first, a path
  // before every longer one it begins, equal paths (a stack of several threads) in the order
  // they were made: SamplesByPath's order of the samples Get gives in this order. Every output
  // walks the samples so: made in this order, each sample's locations follow the one before in
  // memory, where in the order first seen each was a read somewhere else.
  void SortByPath();

 private:
  // A stack's hash (its slot's) and whether its locations need 32 bits.
  struct Hashed {
    uint32_t hash;
    bool wide;
  };
  static Hashed HashOf(std::span<const uint32_t> locations, uint32_t process, uint32_t thread);
  void Insert(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count, uint64_t nanos,
              Hashed hashed);

  // The stack AddLater holds back.
  struct Pending {
    bool held = false;
    std::vector<uint32_t> locations;
    uint32_t process = 0;
    uint32_t thread = 0;
    uint64_t count = 0;
    uint64_t nanos = 0;
    Hashed hashed{};
  };
  Pending pending_;

  // A record in the chunks, 8-byte aligned: this header, then the `frames` locations, `bytes`
  // of them (2 or 4 each).
  struct Header {
    uint64_t count;
    uint64_t nanos;
    uint32_t process;
    uint32_t thread;
    uint32_t frames;
    uint32_t bytes;
  };
  // A slot of the open-addressing table: the low 32 bits of the stack's hash (which also pick
  // the slot, so the table grows without rehashing a record) and its record's offset in 8-byte
  // units, kEmpty when the slot is free.
  struct Slot {
    uint32_t hash = 0;
    uint32_t record = kEmpty;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  // Asks for the record at `record` * 8: its header and the line after it (most records are two
  // lines; the second's address is made as a number, as it may lie past the record's chunk).
  // Always inlined: GCC 12 drops the calls of an out-of-line function that only prefetches.
  [[gnu::always_inline]] void PrefetchRecord(uint32_t record) const {
    const uintptr_t header = reinterpret_cast<uintptr_t>(HeaderAt(uint64_t{record} * 8));
    __builtin_prefetch(reinterpret_cast<const void*>(header));
    __builtin_prefetch(reinterpret_cast<const void*>(header + 64));
  }
  const Header* HeaderAt(uint64_t offset) const {
    return reinterpret_cast<const Header*>(units_[offset / kChunkBytes] + offset % kChunkBytes);
  }
  Header* HeaderAt(uint64_t offset) {
    return reinterpret_cast<Header*>(units_[offset / kChunkBytes] + offset % kChunkBytes);
  }
  // Room for a record of `size` bytes (a multiple of 8) after the last one; its offset.
  uint64_t Allocate(size_t size);
  void Grow();

  std::vector<Slot> slots_;
  // A record's locations as stored, leaf first: 2 or 4 bytes each.
  struct Locations {
    const void* first;
    uint32_t frames;
    bool wide;
    // Location `depth` from the root (1 the outermost); `depth` in [1, frames].
    uint32_t FromRoot(size_t depth) const {
      const size_t k = frames - depth;
      return wide ? static_cast<const uint32_t*>(first)[k] : static_cast<const uint16_t*>(first)[k];
    }
  };
  Locations LocationsAt(uint32_t record) const {
    const Header* header = HeaderAt(uint64_t{record} * 8);
    return Locations{header + 1, header->frames, header->bytes == 4 * size_t{header->frames}};
  }

  std::vector<uint32_t> records_;  // each stack's record offset in 8-byte units, first made first
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
  // The start of each 1 MiB of record offsets (a record longer than a chunk gets a chunk of
  // several units, each pointing into it).
  std::vector<uint8_t*> units_;
  bool slots_released_ = false;
  uint64_t end_ = 0;              // offset of the next record
  uint32_t max_location_ = 0;     // the largest location of any stack
};

}  // namespace jitdump::report
