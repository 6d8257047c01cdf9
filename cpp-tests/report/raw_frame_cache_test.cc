// RawFrameCache: the reader's per-raw-frame cache keeps one entry per distinct key (every part
// of the key tells entries apart) and keeps them all as it grows (onto huge pages past 2 MiB:
// huge_pages.h, whose blocks are checked here too). FlatIndex, the reader's (address, id) ->
// index tables in 16-byte entries filled to three quarters, the same.
#include "jitdump/report/raw_frame_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "jitdump/report/flat_index.h"
#include "jitdump/report/huge_pages.h"

namespace jitdump::report {
namespace {

TEST(RawFrameCacheTest, EveryPartOfTheKeyTellsEntriesApart) {
  RawFrameCache cache;
  EXPECT_EQ(cache.Find({0x1000, 7, 2, 0}), nullptr);
  const RawFrameCache::Key keys[] = {{0x1000, 7, 2, 0}, {0x1001, 7, 2, 0}, {0x1000, 8, 2, 0},
                                     {0x1000, 7, 1, 0}, {0x1000, 7, 2, 1}, {0x1000, 7, 2, 2}};
  uint32_t location = 1;
  for (const RawFrameCache::Key& key : keys) {
    RawFrameCache::Entry& e = cache.Insert(key);
    EXPECT_EQ(e.location, 0u);  // new: empty
    e.location = location++;
  }
  EXPECT_EQ(cache.size(), 6u);
  location = 1;
  for (const RawFrameCache::Key& key : keys) {
    const RawFrameCache::Entry* e = cache.Find(key);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->location, location++);
  }
  // Inserting a key again finds its entry.
  EXPECT_EQ(cache.Insert(keys[3]).location, 4u);
  EXPECT_EQ(cache.size(), 6u);
}

TEST(RawFrameCacheTest, KeepsEveryEntryAsItGrows) {
  RawFrameCache cache;
  constexpr uint32_t kCount = 100000;
  for (uint32_t i = 0; i < kCount; ++i) {
    RawFrameCache::Entry& e = cache.Insert({0x7f0000000000ull + 16ull * i, i % 3, 2, static_cast<uint8_t>(i % 4)});
    e.location = i;
    e.generation = i + 1;
    e.flags = static_cast<uint8_t>(i & 0xff);
  }
  EXPECT_EQ(cache.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    const RawFrameCache::Entry* e = cache.Find({0x7f0000000000ull + 16ull * i, i % 3, 2, static_cast<uint8_t>(i % 4)});
    ASSERT_NE(e, nullptr) << i;
    EXPECT_EQ(e->location, i);
    EXPECT_EQ(e->generation, i + 1u);
    EXPECT_EQ(e->flags, i & 0xff);
  }
  EXPECT_EQ(cache.Find({0x7f0000000000ull + 8, 0, 2, 0}), nullptr);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Find({0x7f0000000000ull, 0, 2, 0}), nullptr);
}

// Every value up to the largest an entry holds comes back, whatever the key (zero addresses and
// ids included: an entry is taken by its value's top bit, not by a key kept out); a larger one is
// refused, not cut to 31 bits.
TEST(FlatIndexTest, KeepsEveryValueAsItGrowsAndRefusesOneTooLarge) {
  FlatIndex index;
  EXPECT_EQ(index.Find(0, 0), nullptr);
  constexpr uint32_t kCount = 200000;
  auto value_of = [](uint32_t i) { return i == 7 ? FlatIndexEntry::kMaxValue : i * 13u; };
  for (uint32_t i = 0; i < kCount; ++i) {
    bool inserted = false;
    FlatIndex::Entry& e = index.Insert(uint64_t{i / 2} * 4, i % 2 == 0 ? 0u : UINT32_MAX, &inserted);
    ASSERT_TRUE(inserted) << i;
    EXPECT_EQ(e.value(), 0u);  // new: 0 until set, yet taken
    e.set_value(value_of(i));
  }
  EXPECT_EQ(index.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    bool inserted = true;
    const FlatIndex::Entry& e = index.Insert(uint64_t{i / 2} * 4, i % 2 == 0 ? 0u : UINT32_MAX, &inserted);
    ASSERT_FALSE(inserted) << i;
    ASSERT_EQ(e.value(), value_of(i)) << i;
    ASSERT_EQ(index.Find(uint64_t{i / 2} * 4, i % 2 == 0 ? 0u : UINT32_MAX), &e) << i;
  }
  EXPECT_EQ(index.Find(2, 0), nullptr);
  EXPECT_EQ(index.Find(0, 1), nullptr);
  bool inserted = false;
  FlatIndex::Entry& e = index.Insert(1, 1, &inserted);
  EXPECT_THROW(e.set_value(FlatIndexEntry::kMaxValue + 1), std::length_error);
  static_assert(sizeof(FlatIndex::Entry) == 16);
}

TEST(RawFrameCacheTest, HugeBlocksAreWholeAlignedHugePages) {
  // A block of a huge page or more starts at one and is written through to its rounded end.
  for (const size_t bytes : {kHugePageBytes, kHugePageBytes + 1, 3 * kHugePageBytes - 8}) {
    std::unique_ptr<uint8_t[], HugeDeleter> block(static_cast<uint8_t*>(AllocateHuge(bytes)));
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.get()) % kHugePageBytes, 0u) << bytes;
    const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    for (size_t i = 0; i < rounded; i += 4096) block[i] = static_cast<uint8_t>(i >> 12);
    block[rounded - 1] = 0xff;
    EXPECT_EQ(block[rounded - 1], 0xff);
  }
  // The allocator's vectors: small ones from the usual allocator, large ones huge, each
  // value-initialized when it grows (the flat tables rely on empty slots being zero).
  std::vector<uint64_t, HugePageAllocator<uint64_t>> small(100);
  std::vector<uint64_t, HugePageAllocator<uint64_t>> large(kHugePageBytes / sizeof(uint64_t) + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, 0u);
  for (uint64_t v : small) ASSERT_EQ(v, 0u);
  for (uint64_t v : large) ASSERT_EQ(v, 0u);
  large.resize(3 * large.size());
  for (uint64_t v : large) ASSERT_EQ(v, 0u);
}

}  // namespace
}  // namespace jitdump::report
