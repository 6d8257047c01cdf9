// The per-method cache of names and lines, its bound and its validation rounds (method_cache.h).
#include "agent/core/method_cache.h"

#include <chrono>
#include <iterator>
#include <thread>

namespace jitdump_agent {

MethodCache::MethodCache(MethodLookup& lookup, size_t capacity, Stats& stats)
    : lookup_(lookup), capacity_(capacity), stats_(stats) {
  entries_.reserve(capacity);
}

std::unique_lock<std::mutex> MethodCache::Lock() { return std::unique_lock<std::mutex>(mutex_); }

void MethodCache::BeginCallback() {
  if (entries_.size() >= capacity_) {
    // The hard bound: reached only when one callback brought more new methods than trimming
    // keeps up with, or with capacity 0 (cache=0), where entries then live only as long as the
    // frames of one load that point at them.
    if (capacity_ != 0) stats_.method_cache_clears.Add();
    entries_.clear();
  } else if (entries_.size() > capacity_ - capacity_ / 8) {
    Trim(kTrimPerCallback);
  }
  stats_.method_cache_high.Offer(entries_.size());
  ++callback_;
  ForgetRecent();
}

void MethodCache::Trim(size_t count) {
  // Buckets in turn: which methods share a bucket depends on their jmethodID's address, not on
  // how recently they were used, so this sheds old and new entries alike.
  const size_t buckets = entries_.bucket_count();
  for (size_t visited = 0; count > 0 && visited < buckets; ++visited) {
    const size_t bucket = trim_bucket_++ % buckets;
    while (count > 0 && entries_.bucket_size(bucket) > 0) {
      entries_.erase(entries_.begin(bucket)->first);
      --count;
    }
  }
}

bool MethodCache::TakeEntriesOf(MethodCache& other, uint32_t max_wait_ms) {
  if (&other == this) return false;
  // Bounded: a holder of either lock may be stuck inside the JVM at VM death (CloseJvm gives up
  // on such a lookup after 1 s), and VMDeath must not wait for it forever.
  std::unique_lock<std::mutex> mine(mutex_, std::defer_lock);
  std::unique_lock<std::mutex> theirs(other.mutex_, std::defer_lock);
  for (int attempt = 0; std::try_lock(mine, theirs) != -1; ++attempt) {
    if (attempt >= kTakeAttempts || static_cast<uint32_t>(attempt) >= max_wait_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const size_t room = capacity_ - capacity_ / 8;  // BeginCallback starts trimming above this
  for (auto it = other.entries_.begin(); it != other.entries_.end() && entries_.size() < room;) {
    auto next = std::next(it);
    if (it->second.resolved && !entries_.contains(it->first)) {
      auto node = other.entries_.extract(it);
      node.mapped().validated_in = 0;  // another cache's round: no round of this one is 0
      entries_.insert(std::move(node));
      stats_.method_entries_handed_over.Add();
    }
    it = next;
  }
  other.ForgetRecent();
  ForgetRecent();
  return true;
}

void MethodCache::Evict(MethodId method) {
  entries_.erase(method);
  ForgetRecent();
}

const MethodInfo* MethodCache::Get(MethodId method) {
  for (size_t i = 0; i < recent_count_; ++i) {
    if (recent_[i].method == method) return recent_[i].info;
  }
  auto [it, inserted] = entries_.try_emplace(method);
  MethodInfo& cached = it->second;
  if (!inserted) {
    // Failed before (failing again costs more than it helps), or already confirmed in this callback.
    if (!cached.resolved || cached.validated_in == callback_) return Remember(method, &cached);
    int64_t end = 0;
    stats_.method_validations.Add();
    const EndLocationAnswer answer = lookup_.EndLocation(method, &end);
    if ((answer == EndLocationAnswer::kFound && end == cached.end_location) ||
        answer == EndLocationAnswer::kJvmDead) {
      // A dead JVM redefines nothing, and would name nothing anew: the entry stands.
      if (answer == EndLocationAnswer::kJvmDead) stats_.method_hits_after_vm_death.Add();
      cached.validated_in = callback_;
      return Remember(method, &cached);
    }
    // Redefined (or the id no longer resolves): look it up again.
  }
  // Nothing of this callback points at the old contents: they were not validated in it.
  cached = MethodInfo();
  stats_.method_lookups.Add();
  try {
    lookup_.Resolve(method, cached);
  } catch (...) {
    // No memory for the name or the lines: keep no half-filled entry (it would pass for a
    // failed lookup with an empty name from now on).
    entries_.erase(it);
    throw;
  }
  cached.validated_in = callback_;
  return Remember(method, &cached);
}

MethodInfo* MethodCache::Remember(MethodId method, MethodInfo* info) {
  if (recent_count_ < kRecentCapacity) {
    recent_[recent_count_++] = {method, info};
  } else {
    recent_[recent_next_] = {method, info};
    recent_next_ = (recent_next_ + 1) % kRecentCapacity;
  }
  return info;
}

}  // namespace jitdump_agent
