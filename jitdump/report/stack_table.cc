#include "jitdump/report/stack_table.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "jitdump/report/flat_index.h"
#include "jitdump/report/sequence_sort.h"

namespace jitdump::report {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

}  // namespace

StackTable::Hashed StackTable::HashOf(std::span<const uint32_t> locations, uint32_t process, uint32_t thread) {
  // The hash and the widest location in one pass, one multiply for two frames; the finalizer
  // spreads every bit over the low ones that pick the slot.
  const size_t frames = locations.size();
  uint64_t h = (uint64_t{process} << 32 | thread) * kGolden;
  uint64_t any = 0;
  size_t k = 0;
  for (; k + 2 <= frames; k += 2) {
    const uint64_t pair = uint64_t{locations[k + 1]} << 32 | locations[k];
    h = (h ^ pair) * kGolden;
    any |= pair;
  }
  if (k < frames) {
    h = (h ^ locations[k]) * kGolden;
    any |= locations[k];
  }
  // A stack's width follows from its own locations, so equal stacks have equal records.
  return Hashed{static_cast<uint32_t>(MixBits(h ^ frames)), static_cast<uint32_t>(any | any >> 32) > UINT16_MAX};
}

void StackTable::Add(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                     uint64_t nanos) {
  if (slots_released_) throw std::logic_error("a stack added after the stack table's slots were released");
  Flush();
  Insert(locations, process, thread, count, nanos, HashOf(locations, process, thread));
}

void StackTable::AddLater(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                          uint64_t nanos) {
  if (slots_released_) throw std::logic_error("a stack added after the stack table's slots were released");
  Flush();
  const Hashed hashed = HashOf(locations, process, thread);
  if (!slots_.empty()) __builtin_prefetch(&slots_[hashed.hash & (slots_.size() - 1)]);
  pending_.locations.assign(locations.begin(), locations.end());
  pending_.process = process;
  pending_.thread = thread;
  pending_.count = count;
  pending_.nanos = nanos;
  pending_.hashed = hashed;
  pending_.held = true;
}

void StackTable::Flush() {
  if (!pending_.held) return;
  pending_.held = false;
  Insert(pending_.locations, pending_.process, pending_.thread, pending_.count, pending_.nanos, pending_.hashed);
}

void StackTable::ReleaseSlots() {
  Flush();
  std::vector<Slot>().swap(slots_);
  slots_released_ = true;
}

void StackTable::Insert(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                        uint64_t nanos, Hashed hashed) {
  const size_t frames = locations.size();
  const uint32_t hash = hashed.hash;
  const bool wide = hashed.wide;
  const size_t bytes = frames * (wide ? 4 : 2);

  // Grown at three quarters full: a probe compares 8-byte slots, eight to a cache line, and
  // reads a record only where the hash matches (the table was 2 MB at a third full).
  if (4 * (records_.size() + 1) > 3 * slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.record == kEmpty) break;
    if (slot.hash != hash) continue;
    Header* seen = HeaderAt(uint64_t{slot.record} * 8);
    if (seen->process == process && seen->thread == thread && seen->frames == frames && seen->bytes == bytes &&
        (wide ? std::memcmp(seen + 1, locations.data(), bytes) == 0
              : std::equal(locations.begin(), locations.end(), reinterpret_cast<const uint16_t*>(seen + 1)))) {
      seen->count += count;
      seen->nanos += nanos;
      return;
    }
  }
  const uint64_t offset = Allocate(sizeof(Header) + ((bytes + 7) & ~size_t{7}));
  Header* made = HeaderAt(offset);
  *made = Header{count, nanos, process, thread, static_cast<uint32_t>(frames), static_cast<uint32_t>(bytes)};
  if (wide) {
    if (bytes > 0) std::memcpy(made + 1, locations.data(), bytes);
  } else {
    std::copy(locations.begin(), locations.end(), reinterpret_cast<uint16_t*>(made + 1));
  }
  slots_[i] = Slot{hash, static_cast<uint32_t>(offset / 8)};
  if (!locations.empty()) max_location_ = std::max(max_location_, *std::max_element(locations.begin(), locations.end()));
  records_.push_back(static_cast<uint32_t>(offset / 8));
}

StackTable::Stack StackTable::Get(size_t i, std::vector<uint32_t>* locations) const {
  const Header* header = HeaderAt(uint64_t{records_[i]} * 8);
  if (header->bytes == 4 * size_t{header->frames}) {
    const uint32_t* first = reinterpret_cast<const uint32_t*>(header + 1);
    locations->assign(first, first + header->frames);
  } else {
    const uint16_t* first = reinterpret_cast<const uint16_t*>(header + 1);
    locations->assign(first, first + header->frames);
  }
  return Stack{header->process, header->thread, header->count, header->nanos};
}

void StackTable::SortByPath() {
  Flush();
  // records_ holds record offsets, which grow in the order the stacks were made: the sort
  // permutes them as SamplesByPath permutes indexes of samples made in this order, equal paths
  // (one stack in several threads) in that order too.
  // Level 0 is the process. Past it, while location + 1 fits in 16 bits (a recording rarely has
  // 65,535 distinct locations), a level is four of a stack's locations from the root (location
  // + 1 each, 0 past the stack's end) in one number: the sort then reads a stack's record once
  // for four of its locations. Else one location.
  if (max_location_ < UINT16_MAX) {
    auto block_at = [this](uint32_t record, size_t level) -> uint64_t {
      const Header* header = HeaderAt(uint64_t{record} * 8);
      if (level == 0) return uint64_t{header->process} << 16 | 1;  // never "ends" (low 16 bits)
      const uint16_t* locations = reinterpret_cast<const uint16_t*>(header + 1);
      const size_t frames = header->frames;
      const size_t depth = 4 * level - 3;  // the block's first, held in its high 16 bits
      if (std::endian::native == std::endian::little && depth + 3 <= frames) {
        // Locations are stored leaf first: depths depth + 3 .. depth lie in a row from
        // locations[frames - depth - 3], which a little-endian load puts in the low to high bits.
        uint64_t block;
        std::memcpy(&block, locations + (frames - depth - 3), sizeof block);
        return block + 0x0001000100010001ull;  // each below 0xffff: no carry into the next
      }
      uint64_t block = 0;
      for (size_t d = depth; d < depth + 4; ++d) block = block << 16 | (d <= frames ? uint64_t{locations[frames - d]} + 1 : 0);
      return block;
    };
    // The header and the locations nearest the root (the record's end). Always inlined, as
    // PrefetchRecord is.
    auto prefetch = [this](uint32_t record) __attribute__((always_inline)) { PrefetchRecord(record); };
    SortSequenceBlocks(records_.data(), records_.data() + records_.size(), 0, block_at,
                       [](uint64_t block) { return (block & 0xffff) == 0; }, prefetch);
    return;
  }
  auto token_at = [this](uint32_t record, size_t depth) -> int64_t {
    if (depth == 0) return HeaderAt(uint64_t{record} * 8)->process;
    const Locations locations = LocationsAt(record);
    return depth <= locations.frames ? int64_t{locations.FromRoot(depth)} : int64_t{-1};
  };
  SortSequences(records_.data(), records_.data() + records_.size(), 0, token_at);
}

uint64_t StackTable::Allocate(size_t size) {
  uint64_t offset = end_;
  if (offset + size > units_.size() * kChunkBytes) {
    // The rest of the last chunk is left unused: a record never spans two chunks.
    offset = units_.size() * kChunkBytes;
    const size_t units = (size + kChunkBytes - 1) / kChunkBytes;
    // Not zeroed: every byte of a record (its header and the locations it says it has) is
    // written before it is read.
    chunks_.push_back(std::make_unique_for_overwrite<uint8_t[]>(units * kChunkBytes));
    for (size_t u = 0; u < units; ++u) units_.push_back(chunks_.back().get() + u * kChunkBytes);
  }
  // Slots and records_ hold offsets in 8-byte units in 32 bits (32 GiB of stacks).
  if ((offset + size) / 8 >= kEmpty) throw std::length_error("more distinct stacks than a profile can hold");
  end_ = offset + size;
  return offset;
}

void StackTable::Grow() {
  std::vector<Slot> old(slots_.empty() ? 1024 : 2 * slots_.size());
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.record == kEmpty) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].record != kEmpty) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace jitdump::report
