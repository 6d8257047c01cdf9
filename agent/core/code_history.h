// When was each piece of the code cache last occupied or freed? The writer thread keeps this
// to move a load's timestamp back safely.
//
// HotSpot posts CompiledMethodLoad from the ServiceThread milliseconds after the code was
// installed and already running; perf attributes samples to a jitted function only from the
// load record's timestamp on, so those early samples stay [unknown]. The code cannot have been
// at its address before the last event that touched that range (the unload of whatever was
// there: HotSpot delivers unloads before a later load that reuses the memory, through one FIFO),
// so the timestamp may move back to just after that event, and no further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace jitdump_agent {

class CodeHistory {
 public:
  // Records that [start, start + size) was occupied or freed at `time` and returns the latest
  // time any byte of the range was touched before (0 when never).
  uint64_t Touch(uint64_t start, uint64_t size, uint64_t time);

  size_t span_count() const { return spans_.size(); }
  uint64_t coarsenings() const { return coarsenings_; }

  // Past this many spans, neighbours are merged pairwise, keeping the later time. That only
  // moves some floors later (less backdating, never a wrong one) and bounds memory however
  // many loads and unloads come and go (about 1.5 MiB at the limit).
  static constexpr size_t kMaxSpans = 32768;

 private:
  void Coarsen();

  struct Span {
    uint64_t end;
    uint64_t time;
  };
  std::map<uint64_t, Span> spans_;  // start -> span; disjoint
  uint64_t coarsenings_ = 0;
};

}  // namespace jitdump_agent
