// The agent's own accounting: what it saw, wrote and lost, and how long callbacks took.
// Updated lock-free from JVM threads and the writer; rendered as JSON at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace jitdump_agent {

// Log-linear latency histogram in nanoseconds: 8 sub-buckets per power of two, so any
// percentile it reports is within 12.5% of the true value. Lock-free, fixed size.
class LatencyHistogram {
 public:
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 64 * kSubBuckets;

  void Record(uint64_t nanos);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t max() const { return max_.load(std::memory_order_relaxed); }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  // Upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 when empty.
  uint64_t Percentile(double q) const;

  static int BucketOf(uint64_t nanos);
  static uint64_t BucketUpperBound(int bucket);

 private:
  std::atomic<uint64_t> buckets_[kBuckets] = {};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> max_{0};
};

struct Counter {
  std::atomic<uint64_t> value{0};
  void Add(uint64_t n = 1) { value.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Get() const { return value.load(std::memory_order_relaxed); }
};

// Keeps the largest value ever offered.
struct HighWater {
  std::atomic<uint64_t> value{0};
  void Offer(uint64_t v) {
    uint64_t seen = value.load(std::memory_order_relaxed);
    while (v > seen && !value.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
    }
  }
  uint64_t Get() const { return value.load(std::memory_order_relaxed); }
};

struct Stats {
  // Events the JVM delivered to us.
  Counter compiled_method_load;
  Counter compiled_method_unload;
  Counter dynamic_code_generated;
  Counter replayed_events;       // delivered inside GenerateEvents (late attach)
  Counter empty_blobs;           // DynamicCodeGenerated with length 0: nothing to write
  Counter deferred_loads;        // loads copied out of the callback and resolved by the writer

  // What reached the file. This group is written by the writer thread only; alignas keeps it
  // off the cache lines the callbacks update, so neither side pays for the other's writes.
  alignas(64) Counter duplicate_loads;  // code already written (replays): skipped by the writer
  Counter code_loads_written;    // JIT_CODE_LOAD records
  Counter debug_info_written;    // JIT_CODE_DEBUG_INFO records
  Counter debug_entries_written;
  Counter inline_info_written;
  Counter bytes_written;
  Counter code_bytes_written;
  Counter backdated_loads;
  Counter backdate_total_ns;
  Counter perfmap_lines_written;
  Counter perfmap_compactions;
  Counter lost_write_error;      // the write failed (disk full, I/O error)
  Counter lost_no_output;        // reached a writer whose dump was not open (never created or closed)
  // A deferred load reached a writer that could not resolve it (no resolver, or not attached:
  // the lifecycle rules that out, so this stays 0 unless something is wrong).
  Counter lost_unresolved;
  // The writer failed on a record in a way other than running out of memory (an exception it
  // did not expect); allocation failures there count as lost_allocation.
  Counter lost_writer_error;
  // The writer did not finish by the JVM's exit (stuck in a write to a hung mount): what it
  // still held, queued or half-written, counted when the stats are taken (Unaccounted).
  Counter lost_writer_stalled;
  // max_size= was reached: the loads after it are counted here, not written.
  Counter lost_size_cap;
  // The dump was deleted while the agent wrote it (link count 0; the session then stops).
  Counter dump_deleted;
  // Why the session ended (StopCause of lifecycle.h, as an int: stats.h stays below it).
  std::atomic<int> stop_cause{0};
  // Writer time to resolve one deferred load (names and lines: the work moved off the JVM thread).
  LatencyHistogram resolve_latency;
  Counter writer_cpu_ns;         // CPU time of the writer thread, all of it, taken when it ends
  Counter writer_sys_ns;         // the part of it spent in the kernel (writes, page cache)
  // Times the writer thread went to sleep (voluntary context switches): each costs a futex
  // wait and a wake-up, which was measured at ~40% of the writer's samples on javac.
  Counter writer_sleeps;

  // What did not reach the file, by reason (with the writer's lost_* above). Each is a code
  // blob the JVM reported that is not in the file. From here on: updated mostly by JVM threads.
  alignas(64) Counter lost_budget;  // the byte budget was full
  Counter lost_queue_full;       // the queue had no free node
  Counter lost_allocation;       // malloc failed, or a record would pass the format's 4 GiB limit
  Counter lost_after_close;      // arrived after the dump was closed (Agent_OnUnload)
  Counter lookup_errors;         // JVMTI name/line lookups that failed unexpectedly
  // Loads written as "[unknown Java method]" (their method's name lookup failed), and among
  // them those whose lookups the JVM refused because it was dying: HotSpot still delivers loads
  // it dequeued before VM death, and once VMDeath has returned JVMTI answers WRONG_PHASE.
  Counter unnamed_loads;
  Counter unnamed_after_vm_death;

  // Method-handle intrinsics (intrinsic_names.h): named from the JVM's code list, or written as
  // "MethodHandle.<intrinsic>(signature unknown)"; how many waited for a read the budget allowed;
  // code lists read, their CPU time, and reads not made at all (the writer's last one, expected
  // to cost more than IntrinsicNamer::kForcedReadMaxNs).
  Counter intrinsics_named;
  Counter intrinsics_unnamed;
  Counter intrinsics_waited;
  Counter intrinsic_lists_read;
  Counter intrinsic_list_ns;
  Counter intrinsic_lists_skipped;

  // The method cache: full lookups (names, source file, line table: several JVMTI calls each)
  // and cheap re-validations of cached entries (one GetMethodLocation per method per callback).
  Counter method_lookups;
  Counter method_validations;
  Counter method_cache_clears;   // times the cache hit its bound and was emptied at once
  // Past VM death: entries the writer handed to the callbacks' cache, and hits on entries JVMTI
  // would no longer validate (loads HotSpot posts then, named from what was resolved before).
  Counter method_entries_handed_over;
  Counter method_hits_after_vm_death;
  HighWater method_cache_high;   // most entries held

  HighWater queue_bytes_high;
  HighWater queue_records_high;

  // The method table that names interpreted frames (method_table_writer.h; interp=on).
  enum class MethodTableState : int { kOff = 0, kOn = 1, kUnavailable = 2, kFailed = 3 };
  std::atomic<int> method_table_state{0};  // a MethodTableState: off (not asked), on, the JVM's layout
                                            // is not known (unavailable), or the file could not be made
  Counter class_prepare;                    // ClassPrepare events the callbacks took
  Counter method_table_classes_lost;        // prepared classes the writer could not describe
  Counter method_table_methods;             // METHOD records written
  Counter method_table_methods_lost;        // methods that could not be read or written
  Counter method_table_retired;             // RETIRE records (class unloaded)
  Counter method_table_redefined;           // methods written again with a new Method* (redefinition)
  Counter method_table_untracked;           // written but past MethodTableWriter::kMaxTracked: not swept
  Counter method_table_bytes;               // bytes appended
  Counter method_table_sweeps;
  Counter method_table_sweep_ns;            // the sweeps' wall time on the writer
  HighWater method_table_tracked_high;      // most Method*s tracked at once

  // Every structure a session keeps for its whole life, with its high-water mark (above, and
  // these) and its bound, so a long soak can show each one flat.
  HighWater event_pool_high;       // recycled event blocks, bytes (event_blocks.h)
  HighWater code_history_high;     // spans of the code history (code_history.h)
  HighWater live_code_high;        // entries of the live code set (live_code.h)
  HighWater held_intrinsics_high;  // intrinsics waiting for a code-list read (intrinsic_stage.h)
  struct Bounds {
    uint64_t method_cache = 0;     // cache=, per cache (the callbacks' and the writer's)
    uint64_t queue_bytes = 0;      // budget=
    uint64_t queue_records = 0;
    uint64_t event_pool = 0;
    uint64_t code_history = 0;
    uint64_t live_code = 0;
    uint64_t held_intrinsics = 0;
    uint64_t dump_bytes = 0;       // max_size=; 0: none
    uint64_t method_table_tracked = 0;  // Method*s the method table follows (interp=on)
  } bounds;

  // Wall time inside each callback (what the JVM thread waits, preemption included).
  LatencyHistogram load_latency;
  LatencyHistogram load_latency_small;  // loads of at most kSmallCode bytes (the usual target)
  LatencyHistogram dynamic_latency;
  LatencyHistogram unload_latency;
  LatencyHistogram class_prepare_latency;  // interp=on: on the thread that loads each class
  // CPU time of the thread inside CompiledMethodLoad, for one load in 16 per thread and only
  // when stats are asked for: the thread CPU clock is a system call, not a vDSO read.
  LatencyHistogram load_cpu;
  static constexpr uint64_t kSmallCode = 4096;

  uint64_t LostTotal() const;
  // Code blobs offered (loads and stubs with code) that are neither written, nor duplicates,
  // nor counted lost: 0 once the writer has finished; what a stalled writer still holds.
  uint64_t Unaccounted() const;
  // One JSON object; `dump_path`, `perfmap_path` and why the session ended are included as
  // strings.
  std::string ToJson(const std::string& dump_path, const std::string& perfmap_path,
                     const std::string& stop_cause_name = "none") const;
};

}  // namespace jitdump_agent
