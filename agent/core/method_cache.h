// Names, source files and line tables of methods, cached per method id. The lookups themselves
// go through a MethodLookup (the agent's asks JVMTI: jvmti_method_lookup.h), made
// inside event callbacks, where the nmethod keeps its methods alive, or on the writer thread for
// a deferred load, whose class the callback pinned. Each side that resolves has its own cache
// (the callbacks' and the writer's); "callback" below means one resolved load.
//
// Safety across class unloading and redefinition: entries are plain strings and numbers, never
// pointers into the JVM, so a stale entry can at worst be wrong, never crash. Each side drops an
// entry when its method's code is unloaded (the callbacks' cache in the unload callback, the
// writer's when the writer meets the unload in the queue); a hit is re-validated once per
// callback against the method's current bytecode end (a redefinition that changes the bytecode
// length re-resolves the method; once VM death has passed JVMTI refuses that check, and nothing
// can be redefined any more, so the entry stands); and past 7/8 of its bound the cache sheds
// entries a few per callback (emptied at once only if it still fills), so memory and per-lookup
// cost stay flat however many classes come and go.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/core/code_event.h"
#include "agent/core/line_map.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

// The name of a method whose lookups failed.
inline constexpr std::string_view kUnknownJavaMethod = "[unknown Java method]";

struct MethodInfo {
  // What a cache hit checks comes first, in the same cache line as the map node's key.
  uint64_t validated_in = 0;  // the callback that last confirmed this entry
  int64_t end_location = -1;  // the method's last bytecode index, -1 when unknown
  bool resolved = false;      // false: the lookups failed
  bool refused_dying = false;  // they failed because the JVM was dying (JVMTI's WRONG_PHASE)
  // A native method of java.lang.invoke.MethodHandle: every such load is a method-handle
  // intrinsic, and the name above is not its own (intrinsic_names.h).
  bool mh_intrinsic = false;
  std::string name;           // display name, in the configured style
  // The perf-map spelling of `name`, made with it (see PerfMapMethodName); empty when it is
  // `name` itself, as it is for every style but names=jvm.
  std::string perf_map_spelling;
  MethodLines source;         // inline-frame name, file and sorted line table (empty when unavailable)

  std::string_view perf_map_name() const { return perf_map_spelling.empty() ? name : perf_map_spelling; }
};

// What a MethodLookup says of a method's current last bytecode index.
enum class EndLocationAnswer {
  kFound,    // written to *end_location
  kGone,     // the id no longer answers (its class was unloaded)
  kJvmDead,  // the JVM refuses every lookup: VM death has passed
};

// Where a MethodCache gets what it caches.
class MethodLookup {
 public:
  // Fills a fresh `info` (everything but validated_in), counting unexpected failures as
  // lookup_errors; a method that cannot be looked up gets resolved = false and a placeholder name.
  virtual void Resolve(MethodId method, MethodInfo& info) = 0;
  // The method's current last bytecode index.
  virtual EndLocationAnswer EndLocation(MethodId method, int64_t* end_location) = 0;

 protected:
  ~MethodLookup() = default;
};

class MethodCache {
 public:
  MethodCache(MethodLookup& lookup, size_t capacity, Stats& stats);

  // All lookups of one callback happen under this lock; pointers returned by Get stay valid
  // until it is released.
  std::unique_lock<std::mutex> Lock();
  // Call with the lock held, before the first Get of a callback: enforces the bound and starts
  // a new validation round (an entry is re-validated at most once per callback).
  void BeginCallback();
  const MethodInfo* Get(MethodId method);
  void Evict(MethodId method);
  // Moves the resolved entries of `other` that this cache lacks into it (no copy: the map nodes
  // change hands), as many as fit below the trim threshold. Takes both locks (call with neither
  // held), trying for about kTakeAttempts ms; false, and nothing moved, when it could not. For
  // the writer's cache, handed to the callbacks once the writer resolves no more.
  bool TakeEntriesOf(MethodCache& other, uint32_t max_wait_ms = kTakeAttempts);
  static constexpr int kTakeAttempts = 50;
  size_t size() const { return entries_.size(); }
  static constexpr size_t kTrimPerCallback = 8;  // entries shed per callback near the bound

 private:
  MethodInfo* Remember(MethodId method, MethodInfo* info);
  void ForgetRecent() { recent_count_ = recent_next_ = 0; }
  // Drops up to `count` entries. Past 7/8 of the bound the cache sheds a few entries per
  // callback rather than emptying all at once when full: clearing 16384 entries inside one
  // callback takes milliseconds of the JVM's time.
  void Trim(size_t count);

  MethodLookup& lookup_;
  const size_t capacity_;
  Stats& stats_;
  std::mutex mutex_;
  // Entries live in the map's nodes (stable addresses): a lookup touches the node, not a
  // second allocation. Memory latency, not instructions, is what a lookup costs in a busy JVM.
  std::unordered_map<MethodId, MethodInfo> entries_;
  uint64_t callback_ = 0;
  size_t trim_bucket_ = 0;  // where the next Trim starts
  // The methods already met in this callback. A load's scope chains name ~100 frames but only
  // a handful of distinct methods (4.2 on average for javac): a short linear scan answers
  // almost every frame without hashing, and each is validated once per callback anyway.
  struct Recent {
    MethodId method;
    MethodInfo* info;
  };
  static constexpr size_t kRecentCapacity = 16;
  Recent recent_[kRecentCapacity];
  size_t recent_count_ = 0;
  size_t recent_next_ = 0;  // slot to overwrite once all are taken
};

}  // namespace jitdump_agent
