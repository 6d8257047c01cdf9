// What each raw frame of a perf.data sample resolved to, keyed by what the sample says before
// anything is looked up: the process, the address, the cpumode and where in the stack it is
// (first, or after a kernel frame: what decides whether it is a return address). A frame seen
// before then costs one probe of one flat array instead of a mapping search, a DSO's rules and
// the location indexes. Every entry says what its answer depends on (the address spaces'
// generation, the JVM and its code map's epoch), which the reader checks before it trusts it.
//
// A FlatTable (flat_index.h) of 32-byte entries, two to a cache line (the probe is the cost of
// a hit); memory follows the distinct raw frames of the recording.
#pragma once

#include <cstdint>

#include "jitdump/report/flat_index.h"

namespace jitdump::report {

struct RawFrameKey {
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint8_t cpumode = 0;
  uint8_t position = 0;  // the reader's: first frame, after a kernel frame
};

struct RawFrameEntry {
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint8_t cpumode = 0;
  uint8_t position = 0;
  bool taken = false;
  uint8_t flags = 0;        // the reader's
  uint32_t location = 0;
  uint32_t jvm = 0;         // the reader's JVM index it was resolved for, when that matters
  uint32_t generation = 0;  // AddressSpaces::FindGeneration when it was resolved or checked
  uint32_t epoch = 0;       // LoadTimeline::Epoch when it was resolved, when that matters

  bool used() const { return taken; }
  bool Is(const RawFrameKey& key) const {
    return ip == key.ip && pid == key.pid && cpumode == key.cpumode && position == key.position;
  }
  RawFrameKey key() const { return {ip, pid, cpumode, position}; }
  static RawFrameEntry Of(const RawFrameKey& key) {
    RawFrameEntry e;
    e.ip = key.ip;
    e.pid = key.pid;
    e.cpumode = key.cpumode;
    e.position = key.position;
    e.taken = true;
    return e;
  }
  static uint64_t Hash(const RawFrameKey& key) {
    return MixBits(key.ip ^ (uint64_t{key.pid} << 32 | uint64_t{key.cpumode} << 8 | key.position));
  }
};

class RawFrameCache : public FlatTable<RawFrameEntry, RawFrameKey, 4096> {
 public:
  using Key = RawFrameKey;
  using Entry = RawFrameEntry;
  using FlatTable::Insert;
  // The entry for `key`, made empty (used, every other field 0) when new.
  Entry& Insert(const Key& key) {
    bool inserted;
    return Insert(key, &inserted);
  }
};

static_assert(sizeof(RawFrameCache::Entry) == 32);

}  // namespace jitdump::report
