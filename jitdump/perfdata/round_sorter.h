// Puts a recording's records in time order the way perf does (ordered-events.c), in bounded
// memory. perf record writes each CPU's buffer in turn, so records are ordered only per CPU;
// after every pass over the buffers it writes FINISHED_ROUND, and no record after a round's
// end is older than the newest record of the round before. So at each round's end everything
// at or before the previous round's newest time can go out, sorted; the rest waits.
//
// Records of equal time keep their order of arrival. A record older than what already went
// out (a recording that breaks the promise) goes out at once, counted. When the records
// waiting exceed the budget (a recording with no rounds at all, or damaged times), the oldest
// half goes out (perf's OE_FLUSH__HALF), counted: memory stays bounded whatever the input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <utility>
#include <vector>

namespace jitdump::perfdata {

// An allocator whose resize leaves new bytes as they are: the records' bytes are copied over them
// at once, where std::allocator's value-initialization would write zeros there first (a second
// pass over every record's bytes).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  explicit UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct QueuedRecord {
  uint64_t time = 0;
  uint64_t offset = 0;  // where the record was found in the recording (for messages)
  uint32_t event = 0;   // which attr decoded its time
  std::span<const uint8_t> bytes;
};

class RoundSorter {
 public:
  explicit RoundSorter(size_t budget_bytes) : budget_(budget_bytes) {}

  // Queues a record (its bytes are copied), or hands it to `out` at once when it is older than
  // what already went out.
  template <typename Out>
  void Add(uint64_t time, uint64_t offset, uint32_t event, std::span<const uint8_t> bytes, Out&& out) {
    if (delivered_any_ && time < last_delivered_) {
      ++late_;
      out(QueuedRecord{time, offset, event, bytes});
      return;
    }
    const size_t at = (arena_.size() + 7) & ~size_t{7};
    arena_.resize(at + bytes.size());
    if (!bytes.empty()) std::memcpy(arena_.data() + at, bytes.data(), bytes.size());
    entries_.push_back(Entry{time, seq_++, offset, at, static_cast<uint32_t>(bytes.size()), event});
    round_max_ = std::max(round_max_, time);
    if (arena_.size() > budget_) {
      ++overflows_;
      FlushHalf(out);
    }
  }

  // A FINISHED_ROUND: everything at or before the previous round's newest time goes out.
  template <typename Out>
  void FinishRound(Out&& out) {
    if (have_previous_round_) DeliverUpTo(previous_round_max_, out);
    previous_round_max_ = round_max_;
    have_previous_round_ = true;
  }

  // The end of the input: everything goes out.
  template <typename Out>
  void Finish(Out&& out) {
    DeliverUpTo(UINT64_MAX, out);
  }

  size_t queued() const { return entries_.size(); }
  uint64_t late() const { return late_; }            // records older than what had gone out
  uint64_t overflows() const { return overflows_; }  // times the budget forced half out

 private:
  struct Entry {
    uint64_t time;
    uint64_t seq;
    uint64_t offset;
    size_t at;
    uint32_t size;
    uint32_t event;
  };
  static bool Before(const Entry& a, const Entry& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }

  template <typename Out>
  void DeliverUpTo(uint64_t limit, Out& out) {
    // The records that can go out, in the order they came: a few runs already in time order
    // (each CPU's buffer is), which a merge of the runs orders in a pass or two where a sort
    // would compare every record log n times.
    ready_.clear();
    size_t kept = 0;
    for (const Entry& e : entries_) {
      if (e.time <= limit) {
        ready_.push_back(e);
      } else {
        entries_[kept++] = e;
      }
    }
    entries_.resize(kept);
    MergeRuns(ready_);
    Deliver(ready_.begin(), ready_.end(), out);
    ready_.clear();
    Compact();
  }

  // Sorts `v` by Before, merging its ascending runs pairwise until one is left.
  void MergeRuns(std::vector<Entry>& v) {
    runs_.clear();
    runs_.push_back(0);
    for (size_t i = 1; i < v.size(); ++i) {
      if (Before(v[i], v[i - 1])) runs_.push_back(i);
    }
    runs_.push_back(v.size());
    while (runs_.size() > 2) {
      merged_.resize(v.size());
      next_runs_.clear();
      size_t k = 0;
      for (; k + 2 < runs_.size(); k += 2) {
        std::merge(v.begin() + static_cast<std::ptrdiff_t>(runs_[k]), v.begin() + static_cast<std::ptrdiff_t>(runs_[k + 1]),
                   v.begin() + static_cast<std::ptrdiff_t>(runs_[k + 1]), v.begin() + static_cast<std::ptrdiff_t>(runs_[k + 2]),
                   merged_.begin() + static_cast<std::ptrdiff_t>(runs_[k]), Before);
        next_runs_.push_back(runs_[k]);
      }
      if (k + 1 < runs_.size()) {  // an odd run left over
        std::copy(v.begin() + static_cast<std::ptrdiff_t>(runs_[k]), v.end(),
                  merged_.begin() + static_cast<std::ptrdiff_t>(runs_[k]));
        next_runs_.push_back(runs_[k]);
      }
      next_runs_.push_back(v.size());
      v.swap(merged_);
      runs_.swap(next_runs_);
    }
  }

  template <typename Out>
  void FlushHalf(Out& out) {
    const auto middle = entries_.begin() + static_cast<std::ptrdiff_t>(entries_.size() / 2 + 1);
    std::nth_element(entries_.begin(), middle - 1, entries_.end(), Before);
    std::sort(entries_.begin(), middle, Before);
    Deliver(entries_.begin(), middle, out);
    entries_.erase(entries_.begin(), middle);
    // The rest back in the order they came, as DeliverUpTo expects (for speed, not correctness).
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
    Compact();
  }

  // Hands out [first, last) (sorted).
  template <typename Out>
  void Deliver(typename std::vector<Entry>::iterator first, typename std::vector<Entry>::iterator last, Out& out) {
    for (auto it = first; it != last; ++it) {
      last_delivered_ = it->time;
      delivered_any_ = true;
      out(QueuedRecord{it->time, it->offset, it->event, std::span<const uint8_t>(arena_.data() + it->at, it->size)});
    }
  }

  // Keeps the bytes of the records still waiting, and only those.
  void Compact() {
    spare_.clear();
    for (Entry& e : entries_) {
      const size_t at = (spare_.size() + 7) & ~size_t{7};
      spare_.resize(at + e.size);
      std::memcpy(spare_.data() + at, arena_.data() + e.at, e.size);
      e.at = at;
    }
    arena_.swap(spare_);
  }

  size_t budget_;
  std::vector<Entry> entries_;  // waiting, in the order they came
  std::vector<Entry> ready_;    // DeliverUpTo's, and MergeRuns' buffers
  std::vector<Entry> merged_;
  std::vector<size_t> runs_;
  std::vector<size_t> next_runs_;
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> arena_;
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> spare_;
  uint64_t seq_ = 0;
  uint64_t round_max_ = 0;  // the newest time queued so far (perf's max_timestamp)
  uint64_t previous_round_max_ = 0;
  bool have_previous_round_ = false;
  uint64_t last_delivered_ = 0;
  bool delivered_any_ = false;
  uint64_t late_ = 0;
  uint64_t overflows_ = 0;
};

}  // namespace jitdump::perfdata
