#include "jitdump/report/load_timeline.h"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace jitdump::report {

LoadTimeline::LoadTimeline(const JitDump& dump) {
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* load = dump.records[i].load();
    if (load == nullptr || load->code_size == 0) continue;
    const uint64_t end = load->code_size > UINT64_MAX - load->code_addr ? UINT64_MAX : load->code_addr + load->code_size;
    by_time_.push_back(LoadRef{load->code_addr, end, dump.records[i].timestamp, i});
  }
  // Loads are applied in file order for final_, so do that before sorting by time.
  SpanMap spans;
  for (const LoadRef& load : by_time_) Claim(spans, load, [](const LoadRef& a, const LoadRef& b) {
    return a.record > b.record;
  });
  final_ = Fixed(spans, &final_stamps_);
  spans.clear();
  std::stable_sort(by_time_.begin(), by_time_.end(),
                   [](const LoadRef& a, const LoadRef& b) { return a.timestamp < b.timestamp; });
  for (const LoadRef& load : by_time_) Claim(spans, load, [](const LoadRef& a, const LoadRef& b) {
    return std::tie(a.timestamp, a.record) < std::tie(b.timestamp, b.record);
  });
  earliest_ = Fixed(spans);
}

std::vector<LoadTimeline::FixedSpan> LoadTimeline::Fixed(const SpanMap& map, std::vector<uint64_t>* stamps) {
  std::vector<FixedSpan> spans;
  spans.reserve(map.size());
  if (stamps != nullptr) stamps->reserve(map.size());
  for (const auto& [start, span] : map) {
    spans.push_back(FixedSpan{start, span.end, span.record});
    if (stamps != nullptr) stamps->push_back(span.timestamp);
  }
  return spans;
}

const LoadTimeline::FixedSpan* LoadTimeline::SpanAt(const std::vector<FixedSpan>& spans, uint64_t addr) {
  auto it = std::upper_bound(spans.begin(), spans.end(), addr,
                             [](uint64_t a, const FixedSpan& span) { return a < span.start; });
  if (it == spans.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

template <typename Better>
void LoadTimeline::Claim(SpanMap& map, const LoadRef& load, Better better) {
  uint64_t pos = load.start;
  const uint64_t end = load.end;
  auto it = map.lower_bound(pos);  // the first span starting at or after `pos`
  if (it != map.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > pos) {  // a span starting before `pos` reaches past it: split it there
      const Span tail = prev->second;
      prev->second.end = pos;
      it = map.emplace_hint(it, pos, tail);
    }
  }
  while (pos < end) {
    if (it == map.end() || it->first >= end) {  // nothing owns [pos, end)
      map.emplace_hint(it, pos, Span{end, load.record, load.timestamp});
      return;
    }
    if (it->first > pos) {  // nothing owns [pos, next span)
      map.emplace_hint(it, pos, Span{it->first, load.record, load.timestamp});
      pos = it->first;
      continue;
    }
    if (it->second.end > end) {  // the span reaches past `end`: split it there
      map.emplace_hint(std::next(it), end, it->second);
      it->second.end = end;
    }
    const LoadRef owner{it->first, it->second.end, it->second.timestamp, it->second.record};
    if (better(load, owner)) {
      it->second.record = load.record;
      it->second.timestamp = load.timestamp;
    }
    pos = it->second.end;
    ++it;
  }
}

int64_t LoadTimeline::Lookup(const SpanMap& map, uint64_t addr) {
  auto it = map.upper_bound(addr);
  if (it == map.begin()) return -1;
  --it;
  return addr < it->second.end ? static_cast<int64_t>(it->second.record) : -1;
}

void LoadTimeline::AdvanceTo(uint64_t time) {
  if (time < now_) {
    current_.clear();
    applied_ = 0;
    ++rewinds_;
    ++epoch_;
  }
  while (applied_ < by_time_.size() && by_time_[applied_].timestamp <= time) {
    Claim(current_, by_time_[applied_], [](const LoadRef& a, const LoadRef& b) { return a.record > b.record; });
    ++applied_;
    ++epoch_;
  }
  now_ = time;
}

LoadTimeline::Hit LoadTimeline::Find(uint64_t addr, uint64_t time) {
  AdvanceTo(time);  // also when current_ is not asked: Epoch's callers see the same map
  // The latest load in file order of all that cover the address, when it is stamped by `time`,
  // is applied and so the latest of the applied ones too: current_'s answer without a walk of
  // its tree (thousands of spans, a cache miss a level: 93 % of this function's time when every
  // query walked it). Only an address whose code was replaced after `time` needs current_.
  const FixedSpan* last = SpanAt(final_, addr);
  if (last != nullptr && final_stamps_[static_cast<size_t>(last - final_.data())] <= time) {
    return Hit{static_cast<int64_t>(last->record), false};
  }
  const int64_t record = Lookup(current_, addr);
  if (record >= 0) return Hit{record, false};
  const FixedSpan* first = SpanAt(earliest_, addr);
  return first != nullptr ? Hit{static_cast<int64_t>(first->record), true} : Hit{};
}

int64_t LoadTimeline::FindFinal(uint64_t addr) const {
  const FixedSpan* span = SpanAt(final_, addr);
  return span != nullptr ? static_cast<int64_t>(span->record) : -1;
}

}  // namespace jitdump::report
