#include "jitdump/report/stack_table.h"

#include <algorithm>
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
  Flush();
  Insert(locations, process, thread, count, nanos, HashOf(locations, process, thread));
}

void StackTable::AddLater(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                          uint64_t nanos) {
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

void StackTable::Insert(std::span<const uint32_t> locations, uint32_t process, uint32_t thread, uint64_t count,
                        uint64_t nanos, Hashed hashed) {
  const size_t frames = locations.size();
  const uint32_t hash = hashed.hash;
  const bool wide = hashed.wide;
  const size_t bytes = frames * (wide ? 4 : 2);

  if (2 * (records_.size() + 1) > slots_.size()) Grow();
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
  // records_ holds record offsets: the sort permutes them as SamplesByPath permutes indexes of
  // samples made in this order, by the same tokens, so equal paths come out in the same order.
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
