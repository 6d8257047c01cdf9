// The writer's record of when each code range was last touched (code_history.h).
#include "agent/core/code_history.h"

#include <algorithm>

namespace jitdump_agent {

uint64_t CodeHistory::Touch(uint64_t start, uint64_t size, uint64_t time) {
  if (size == 0) size = 1;
  const uint64_t end = start + size < start ? UINT64_MAX : start + size;
  uint64_t latest = 0;
  auto it = spans_.upper_bound(start);
  if (it != spans_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > start) it = prev;
  }
  while (it != spans_.end() && it->first < end) {
    const uint64_t span_start = it->first;
    const Span span = it->second;
    latest = std::max(latest, span.time);
    it = spans_.erase(it);
    // Keep the parts of the old span outside the new range.
    if (span_start < start) spans_.emplace(span_start, Span{start, span.time});
    if (span.end > end) {
      it = spans_.emplace(end, Span{span.end, span.time}).first;
      break;
    }
  }
  spans_[start] = Span{end, time};
  if (spans_.size() > kMaxSpans) Coarsen();
  return latest;
}

void CodeHistory::Coarsen() {
  // Neighbours are merged pairwise whether they touch or not: HotSpot's code ranges rarely
  // touch (nmethod headers and metadata sit between them), and a pass that merged only touching
  // spans could leave the count above the limit and run again on every load. Halving makes the
  // pass amortized O(1) per touch. A merged span covers the gap between its halves with the
  // later time: loads there get a later floor (less backdating), never a wrong one.
  ++coarsenings_;
  for (auto it = spans_.begin(); it != spans_.end(); ++it) {
    const auto next = std::next(it);
    if (next == spans_.end()) break;
    it->second.end = next->second.end;
    it->second.time = std::max(it->second.time, next->second.time);
    spans_.erase(next);
  }
}

}  // namespace jitdump_agent
