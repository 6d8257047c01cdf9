// The agent's statistics and their JSON (stats.h).
#include "agent/stats.h"

#include <bit>
#include <cinttypes>
#include <cstdio>

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

void AppendJsonString(std::string& out, const std::string& s) {
  out.push_back('"');
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

void AppendField(std::string& out, const char* name, uint64_t value, bool comma = true) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "\"%s\":%" PRIu64 "%s", name, value, comma ? "," : "");
  out += buf;
}

// A structure's high-water mark and its bound (0: none set).
void AppendStructure(std::string& out, const char* name, uint64_t high, uint64_t bound, bool comma) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "\"%s\":{\"high_water\":%" PRIu64 ",\"bound\":%" PRIu64 "}%s", name, high, bound,
                comma ? "," : "");
  out += buf;
}

void AppendLatency(std::string& out, const char* name, const LatencyHistogram& h, bool comma) {
  out += "\"";
  out += name;
  out += "\":{";
  AppendField(out, "count", h.count());
  AppendField(out, "p50_ns", h.Percentile(0.50));
  AppendField(out, "p90_ns", h.Percentile(0.90));
  AppendField(out, "p99_ns", h.Percentile(0.99));
  AppendField(out, "max_ns", h.max());
  AppendField(out, "total_ns", h.total(), false);
  out += comma ? "}," : "}";
}

}  // namespace

std::string Stats::ToJson(const std::string& dump_path, const std::string& perfmap_path,
                          const std::string& stop_cause_name) const {
  std::string out = "{\"dump\":";
  AppendJsonString(out, dump_path);
  out += ",\"perfmap\":";
  AppendJsonString(out, perfmap_path);
  out += ",\"events\":{";
  AppendField(out, "compiled_method_load", compiled_method_load.Get());
  AppendField(out, "compiled_method_unload", compiled_method_unload.Get());
  AppendField(out, "dynamic_code_generated", dynamic_code_generated.Get());
  AppendField(out, "replayed", replayed_events.Get());
  AppendField(out, "duplicate_loads", duplicate_loads.Get());
  AppendField(out, "empty_blobs", empty_blobs.Get());
  AppendField(out, "deferred_loads", deferred_loads.Get(), false);
  out += "},\"written\":{";
  AppendField(out, "code_loads", code_loads_written.Get());
  AppendField(out, "debug_info", debug_info_written.Get());
  AppendField(out, "debug_entries", debug_entries_written.Get());
  AppendField(out, "inline_info", inline_info_written.Get());
  AppendField(out, "bytes", bytes_written.Get());
  AppendField(out, "code_bytes", code_bytes_written.Get());
  AppendField(out, "backdated_loads", backdated_loads.Get());
  AppendField(out, "backdate_total_ns", backdate_total_ns.Get());
  AppendField(out, "perfmap_lines", perfmap_lines_written.Get());
  AppendField(out, "perfmap_compactions", perfmap_compactions.Get(), false);
  out += "},\"lost\":{";
  AppendField(out, "total", LostTotal());
  AppendField(out, "budget", lost_budget.Get());
  AppendField(out, "queue_full", lost_queue_full.Get());
  AppendField(out, "allocation", lost_allocation.Get());
  AppendField(out, "write_error", lost_write_error.Get());
  AppendField(out, "after_close", lost_after_close.Get());
  AppendField(out, "no_output", lost_no_output.Get());
  AppendField(out, "unresolved", lost_unresolved.Get());
  AppendField(out, "writer_error", lost_writer_error.Get());
  AppendField(out, "writer_stalled", lost_writer_stalled.Get());
  AppendField(out, "size_cap", lost_size_cap.Get(), false);
  out += "},\"queue\":{";
  AppendField(out, "bytes_high_water", queue_bytes_high.Get());
  AppendField(out, "records_high_water", queue_records_high.Get(), false);
  out += "},\"structures\":{";
  AppendStructure(out, "method_cache", method_cache_high.Get(), bounds.method_cache, true);
  AppendStructure(out, "queue_bytes", queue_bytes_high.Get(), bounds.queue_bytes, true);
  AppendStructure(out, "queue_records", queue_records_high.Get(), bounds.queue_records, true);
  AppendStructure(out, "event_pool_bytes", event_pool_high.Get(), bounds.event_pool, true);
  AppendStructure(out, "code_history_spans", code_history_high.Get(), bounds.code_history, true);
  AppendStructure(out, "live_code_entries", live_code_high.Get(), bounds.live_code, true);
  AppendStructure(out, "held_intrinsics", held_intrinsics_high.Get(), bounds.held_intrinsics, true);
  AppendStructure(out, "dump_bytes", bytes_written.Get(), bounds.dump_bytes, false);
  out += "},\"session\":{";
  AppendField(out, "dump_deleted", dump_deleted.Get());
  out += "\"stopped_by\":";
  AppendJsonString(out, stop_cause_name);
  out += "},";
  AppendField(out, "lookup_errors", lookup_errors.Get());
  out += "\"unnamed_loads\":{";
  AppendField(out, "total", unnamed_loads.Get());
  AppendField(out, "after_vm_death", unnamed_after_vm_death.Get(), false);
  out += "},\"method_handle_intrinsics\":{";
  AppendField(out, "named", intrinsics_named.Get());
  AppendField(out, "unnamed", intrinsics_unnamed.Get());
  AppendField(out, "waited", intrinsics_waited.Get());
  AppendField(out, "code_lists_read", intrinsic_lists_read.Get());
  AppendField(out, "code_list_ns", intrinsic_list_ns.Get());
  AppendField(out, "code_lists_skipped", intrinsic_lists_skipped.Get(), false);
  out += "},";
  out += "\"method_cache\":{";
  AppendField(out, "lookups", method_lookups.Get());
  AppendField(out, "validations", method_validations.Get());
  AppendField(out, "clears", method_cache_clears.Get());
  AppendField(out, "handed_over_at_vm_death", method_entries_handed_over.Get());
  AppendField(out, "hits_after_vm_death", method_hits_after_vm_death.Get());
  AppendField(out, "entries_high_water", method_cache_high.Get(), false);
  out += "},";
  out += "\"callback_latency\":{";
  AppendLatency(out, "compiled_method_load", load_latency, true);
  AppendLatency(out, "compiled_method_load_code_le_4k", load_latency_small, true);
  AppendLatency(out, "dynamic_code_generated", dynamic_latency, true);
  AppendLatency(out, "compiled_method_unload", unload_latency, false);
  out += "},\"callback_cpu\":{";
  AppendLatency(out, "compiled_method_load", load_cpu, false);
  out += "},\"writer_latency\":{";
  AppendLatency(out, "resolve_deferred_load", resolve_latency, false);
  out += "},\"writer\":{";
  AppendField(out, "cpu_ns", writer_cpu_ns.Get());
  AppendField(out, "sys_ns", writer_sys_ns.Get());
  AppendField(out, "sleeps", writer_sleeps.Get(), false);
  out += "}}\n";
  return out;
}

}  // namespace jitdump_agent
