// The agent's statistics and their JSON (stats.h).
#include "agent/core/stats.h"

#include <bit>
#include <cinttypes>
#include <cstdio>

#include "agent/core/json_writer.h"

namespace jitdump_agent {

int LatencyHistogram::BucketOf(uint64_t nanos) {
  if (nanos < kSubBuckets) return static_cast<int>(nanos);
  const int exponent = 63 - std::countl_zero(nanos);  // >= 3
  const int sub = static_cast<int>((nanos >> (exponent - 3)) & (kSubBuckets - 1));
  const int bucket = (exponent - 2) * kSubBuckets + sub;
  return bucket < kBuckets ? bucket : kBuckets - 1;
}

uint64_t LatencyHistogram::BucketUpperBound(int bucket) {
  if (bucket < kSubBuckets) return static_cast<uint64_t>(bucket);
  const int exponent = bucket / kSubBuckets + 2;
  const uint64_t sub = static_cast<uint64_t>(bucket % kSubBuckets);
  if (exponent >= 63) return UINT64_MAX;
  const uint64_t base = (uint64_t{kSubBuckets} + sub) << (exponent - 3);
  return base + (uint64_t{1} << (exponent - 3)) - 1;
}

void LatencyHistogram::Record(uint64_t nanos) {
  buckets_[BucketOf(nanos)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(nanos, std::memory_order_relaxed);
  uint64_t seen = max_.load(std::memory_order_relaxed);
  while (nanos > seen && !max_.compare_exchange_weak(seen, nanos, std::memory_order_relaxed)) {
  }
}

uint64_t LatencyHistogram::Percentile(double q) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(n) + 0.5);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b].load(std::memory_order_relaxed);
    if (seen >= rank) {
      const uint64_t bound = BucketUpperBound(b);
      return bound < max() ? bound : max();
    }
  }
  return max();
}

uint64_t Stats::LostTotal() const {
  return lost_budget.Get() + lost_queue_full.Get() + lost_allocation.Get() + lost_write_error.Get() +
         lost_after_close.Get() + lost_no_output.Get() + lost_unresolved.Get() + lost_writer_error.Get() +
         lost_writer_stalled.Get() + lost_size_cap.Get();
}

uint64_t Stats::Unaccounted() const {
  const uint64_t offered = compiled_method_load.Get() + dynamic_code_generated.Get() - empty_blobs.Get();
  const uint64_t accounted = code_loads_written.Get() + duplicate_loads.Get() + LostTotal();
  return offered > accounted ? offered - accounted : 0;
}

namespace {

// A structure's high-water mark and its bound (0: none set).
void Structure(JsonWriter& json, const char* name, uint64_t high, uint64_t bound) {
  json.Begin(name).Field("high_water", high).Field("bound", bound).End();
}

void Latency(JsonWriter& json, const char* name, const LatencyHistogram& h) {
  json.Begin(name)
      .Field("count", h.count())
      .Field("p50_ns", h.Percentile(0.50))
      .Field("p90_ns", h.Percentile(0.90))
      .Field("p99_ns", h.Percentile(0.99))
      .Field("max_ns", h.max())
      .Field("total_ns", h.total())
      .End();
}

}  // namespace

std::string Stats::ToJson(const std::string& dump_path, const std::string& perfmap_path,
                          const std::string& stop_cause_name) const {
  JsonWriter json;
  json.Field("dump", dump_path);
  json.Field("perfmap", perfmap_path);
  json.Begin("events");
  json.Field("compiled_method_load", compiled_method_load.Get());
  json.Field("compiled_method_unload", compiled_method_unload.Get());
  json.Field("dynamic_code_generated", dynamic_code_generated.Get());
  json.Field("replayed", replayed_events.Get());
  json.Field("duplicate_loads", duplicate_loads.Get());
  json.Field("empty_blobs", empty_blobs.Get());
  json.Field("deferred_loads", deferred_loads.Get());
  json.End();
  json.Begin("written");
  json.Field("code_loads", code_loads_written.Get());
  json.Field("debug_info", debug_info_written.Get());
  json.Field("debug_entries", debug_entries_written.Get());
  json.Field("inline_info", inline_info_written.Get());
  json.Field("bytes", bytes_written.Get());
  json.Field("code_bytes", code_bytes_written.Get());
  json.Field("backdated_loads", backdated_loads.Get());
  json.Field("backdate_total_ns", backdate_total_ns.Get());
  json.Field("perfmap_lines", perfmap_lines_written.Get());
  json.Field("perfmap_compactions", perfmap_compactions.Get());
  json.End();
  json.Begin("lost");
  json.Field("total", LostTotal());
  json.Field("budget", lost_budget.Get());
  json.Field("queue_full", lost_queue_full.Get());
  json.Field("allocation", lost_allocation.Get());
  json.Field("write_error", lost_write_error.Get());
  json.Field("after_close", lost_after_close.Get());
  json.Field("no_output", lost_no_output.Get());
  json.Field("unresolved", lost_unresolved.Get());
  json.Field("writer_error", lost_writer_error.Get());
  json.Field("writer_stalled", lost_writer_stalled.Get());
  json.Field("size_cap", lost_size_cap.Get());
  json.End();
  json.Begin("queue");
  json.Field("bytes_high_water", queue_bytes_high.Get());
  json.Field("records_high_water", queue_records_high.Get());
  json.End();
  json.Begin("structures");
  Structure(json, "method_cache", method_cache_high.Get(), bounds.method_cache);
  Structure(json, "queue_bytes", queue_bytes_high.Get(), bounds.queue_bytes);
  Structure(json, "queue_records", queue_records_high.Get(), bounds.queue_records);
  Structure(json, "event_pool_bytes", event_pool_high.Get(), bounds.event_pool);
  Structure(json, "code_history_spans", code_history_high.Get(), bounds.code_history);
  Structure(json, "live_code_entries", live_code_high.Get(), bounds.live_code);
  Structure(json, "held_intrinsics", held_intrinsics_high.Get(), bounds.held_intrinsics);
  Structure(json, "method_table_tracked", method_table_tracked_high.Get(), bounds.method_table_tracked);
  Structure(json, "dump_bytes", bytes_written.Get(), bounds.dump_bytes);
  json.End();
  json.Begin("session");
  json.Field("dump_deleted", dump_deleted.Get());
  json.Field("stopped_by", stop_cause_name);
  json.End();
  json.Field("lookup_errors", lookup_errors.Get());
  json.Begin("unnamed_loads");
  json.Field("total", unnamed_loads.Get());
  json.Field("after_vm_death", unnamed_after_vm_death.Get());
  json.End();
  json.Begin("method_handle_intrinsics");
  json.Field("named", intrinsics_named.Get());
  json.Field("unnamed", intrinsics_unnamed.Get());
  json.Field("waited", intrinsics_waited.Get());
  json.Field("code_lists_read", intrinsic_lists_read.Get());
  json.Field("code_list_ns", intrinsic_list_ns.Get());
  json.Field("code_lists_skipped", intrinsic_lists_skipped.Get());
  json.End();
  static const char* const kTableStates[] = {"off", "on", "unavailable", "failed"};
  const int state = method_table_state.load(std::memory_order_relaxed);
  json.Begin("method_table");
  json.Field("state", std::string(state >= 0 && state < 4 ? kTableStates[state] : "?"));
  json.Field("class_prepare", class_prepare.Get());
  json.Field("classes_lost", method_table_classes_lost.Get());
  json.Field("methods", method_table_methods.Get());
  json.Field("methods_lost", method_table_methods_lost.Get());
  json.Field("retired", method_table_retired.Get());
  json.Field("redefined", method_table_redefined.Get());
  json.Field("untracked", method_table_untracked.Get());
  json.Field("bytes", method_table_bytes.Get());
  json.Field("sweeps", method_table_sweeps.Get());
  json.Field("sweep_ns", method_table_sweep_ns.Get());
  json.Field("tracked_high_water", method_table_tracked_high.Get());
  json.End();
  json.Begin("method_cache");
  json.Field("lookups", method_lookups.Get());
  json.Field("validations", method_validations.Get());
  json.Field("clears", method_cache_clears.Get());
  json.Field("handed_over_at_vm_death", method_entries_handed_over.Get());
  json.Field("hits_after_vm_death", method_hits_after_vm_death.Get());
  json.Field("entries_high_water", method_cache_high.Get());
  json.End();
  json.Begin("callback_latency");
  Latency(json, "compiled_method_load", load_latency);
  Latency(json, "compiled_method_load_code_le_4k", load_latency_small);
  Latency(json, "dynamic_code_generated", dynamic_latency);
  Latency(json, "compiled_method_unload", unload_latency);
  Latency(json, "class_prepare", class_prepare_latency);
  json.End();
  json.Begin("callback_cpu");
  Latency(json, "compiled_method_load", load_cpu);
  json.End();
  json.Begin("writer_latency");
  Latency(json, "resolve_deferred_load", resolve_latency);
  json.End();
  json.Begin("writer");
  json.Field("cpu_ns", writer_cpu_ns.Get());
  json.Field("sys_ns", writer_sys_ns.Get());
  json.Field("sleeps", writer_sleeps.Get());
  json.End();
  return json.Finish();
}

}  // namespace jitdump_agent
