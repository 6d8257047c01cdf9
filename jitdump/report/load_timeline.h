// Which CODE_LOAD of one dump described an address at a given time: the index every JIT frame
// of a profile is resolved through.
//
// The answer is FindLoadAt's (read/queries.h): of the loads covering the address whose timestamp is
// at most the sample's time, the latest in file order. That is what the agent's backdating
// promises: a load's timestamp is moved back to just after the last event that touched its
// range, so from that time on, until a later load covers the address, the code there is this
// load's. The dump has no unload records, so code that was freed and not reused keeps its last
// load, as in perf.
//
// When every load covering the address is stamped after the sample (code a late attach
// replays with GenerateEvents, or a load posted after its code ran and backdated too little)
// the earliest covering load is the best witness of what ran there, and Find says so with
// `before_load`.
//
// FindLoadAt scans every record per query. Here queries cost O(log n): perf script prints
// samples in time order, so the index keeps the code map as of the last query's time and
// applies the loads stamped since; a query earlier than the previous one rebuilds that map
// from the start (correct for any order, fast for the order perf gives).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "jitdump/read/dump.h"
#include "jitdump/read/queries.h"

namespace jitdump::report {

class LoadTimeline {
 public:
  explicit LoadTimeline(const JitDump& dump);

  struct Hit {
    int64_t record = -1;       // index into JitDump::records of the CODE_LOAD, or -1
    bool before_load = false;  // every covering load is stamped after the queried time
  };

  // The load covering `addr` at `time` (perf's sample time, CLOCK_MONOTONIC nanoseconds).
  Hit Find(uint64_t addr, uint64_t time);
  // The load covering `addr` once the whole dump is applied (for samples without a time, or a
  // recording not made with the dump's clock): the latest covering load in file order.
  int64_t FindFinal(uint64_t addr) const;

  // How many times a query earlier than the previous one rebuilt the map (a statistic).
  uint64_t rewinds() const { return rewinds_; }

  // Brings the map to `time` and returns a number that changes whenever that changed the map:
  // while it stays the same, Find(addr, time) answers as it did (for callers' caches).
  uint64_t Epoch(uint64_t time) {
    AdvanceTo(time);
    return epoch_;
  }

 private:
  // Address ranges, each owned by one load record (its timestamp kept for comparisons).
  struct Span {
    uint64_t end = 0;  // exclusive
    size_t record = 0;
    uint64_t timestamp = 0;
  };
  using SpanMap = std::map<uint64_t, Span>;  // start -> span

  struct LoadRef {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t timestamp = 0;
    size_t record = 0;
  };

  // Gives every address of [load.start, load.end) to `load` where the map has no owner or
  // `better(load, owner)` holds (owner as a LoadRef of the part it owns).
  template <typename Better>
  static void Claim(SpanMap& map, const LoadRef& load, Better better);
  static int64_t Lookup(const SpanMap& map, uint64_t addr);
  void AdvanceTo(uint64_t time);

  // A span map that no longer changes, as an array sorted by start: a lookup is a binary search
  // through contiguous memory instead of a walk down a tree of nodes (most JIT frames that miss
  // the reader's caches look up both of these), and it takes a third of the map's memory.
  struct FixedSpan {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive
    size_t record = 0;
  };
  // `stamps`, when given: each span's record's timestamp, in the spans' order.
  static std::vector<FixedSpan> Fixed(const SpanMap& map, std::vector<uint64_t>* stamps = nullptr);
  // The span holding `addr`, or null.
  static const FixedSpan* SpanAt(const std::vector<FixedSpan>& spans, uint64_t addr);

  std::vector<LoadRef> by_time_;  // every load with code, by (timestamp, file order)
  size_t applied_ = 0;            // by_time_[0, applied_) are in current_
  uint64_t now_ = 0;              // the time current_ describes
  SpanMap current_;               // the latest load in file order among those applied
  std::vector<FixedSpan> earliest_;  // the covering load with the smallest timestamp
  std::vector<FixedSpan> final_;     // the latest covering load in file order
  std::vector<uint64_t> final_stamps_;  // final_[i]'s load's timestamp (apart: FixedSpan's 24
                                        // bytes became 32 and the report's peak RSS 8 MiB larger)
  uint64_t rewinds_ = 0;
  uint64_t epoch_ = 0;
};

}  // namespace jitdump::report
