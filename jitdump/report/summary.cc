#include "jitdump/report/summary.h"

#include <cmath>

#include "jitdump/report/sample_leaf.h"

namespace jitdump::report {
namespace {

struct Counts {
  uint64_t samples = 0;
  uint64_t named = 0;
  uint64_t jit = 0;  // innermost frame in JIT code (named from a dump, or unresolved there)
  uint64_t jit_named = 0;
  uint64_t java = 0;
  uint64_t java_with_line = 0;
  uint64_t interpreted = 0;
  uint64_t kernel = 0;
  uint64_t native = 0;

  void Add(const SampleLeaf& leaf, uint64_t n) {
    samples += n;
    if (leaf.function == nullptr) return;
    const FrameKind kind = leaf.function->kind;
    if (kind != FrameKind::kUnknown) named += n;
    const bool from_dump = IsJava(kind) || kind == FrameKind::kInterpreted || kind == FrameKind::kStub;
    if (from_dump || IsUnresolvedJit(leaf)) jit += n;
    if (from_dump) jit_named += n;
    if (IsJava(kind)) java += n;
    if (IsJava(kind) && leaf.line != 0) java_with_line += n;
    if (kind == FrameKind::kInterpreted) interpreted += n;
    if (kind == FrameKind::kKernel) kernel += n;
    if (kind == FrameKind::kNative) native += n;
  }
};

// A percentage with two decimals (a share of 0 samples is 0).
double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : std::round(10000.0 * static_cast<double>(part) / static_cast<double>(whole)) / 100.0;
}

nlohmann::json ToJson(const Counts& c) {
  return {
      {"samples", c.samples},
      {"named", c.named},
      {"jit", c.jit},
      {"jit_named", c.jit_named},
      {"java", c.java},
      {"java_with_line", c.java_with_line},
      {"interpreted", c.interpreted},
      {"kernel", c.kernel},
      {"native", c.native},
      {"named_percent", Percent(c.named, c.samples)},
      {"jit_named_percent", Percent(c.jit_named, c.jit)},
      {"java_with_line_percent", Percent(c.java_with_line, c.java)},
      {"interpreted_percent", Percent(c.interpreted, c.samples)},
  };
}

}  // namespace

nlohmann::json Summary(const Profile& profile, const ReadStats& stats,
                       const std::map<uint32_t, nlohmann::json>& agent_stats) {
  Counts all;
  std::vector<Counts> per_process(profile.processes.size());
  for (const Sample& sample : profile.samples) {
    const SampleLeaf leaf = LeafOf(profile, sample);
    all.Add(leaf, sample.count);
    if (sample.process < per_process.size()) per_process[sample.process].Add(leaf, sample.count);
  }
  nlohmann::json processes = nlohmann::json::array();
  for (size_t i = 0; i < profile.processes.size(); ++i) {
    const Process& p = profile.processes[i];
    nlohmann::json entry = ToJson(per_process[i]);
    entry["pid"] = p.pid;
    entry["command"] = p.command;
    entry["jvm"] = !p.dump.empty();
    if (!p.dump.empty()) {
      entry["dump"] = p.dump;
      entry["dump_pid"] = p.dump_pid;
    }
    const auto stats_it = agent_stats.find(static_cast<uint32_t>(i));
    if (stats_it != agent_stats.end()) entry["agent_stats"] = stats_it->second;
    processes.push_back(std::move(entry));
  }
  nlohmann::json out = ToJson(all);
  out["period_ns"] = profile.period_ns;
  out["duration_ns"] = profile.end_ns > profile.start_ns ? profile.end_ns - profile.start_ns : 0;
  out["processes"] = std::move(processes);
  out["reader"] = {
      {"frames", stats.frames},
      {"jit_frames", stats.jit_frames},
      {"jit_resolved", stats.jit_resolved},
      {"jit_expanded", stats.jit_expanded},
      {"jit_before_load", stats.jit_before_load},
      {"jit_time_resolved", stats.jit_time_resolved},
      {"skipped_events", stats.skipped_events},
      {"warnings", stats.warnings},
  };
  // What the walks of copied stacks found (samples recorded with --call-graph dwarf in JVMs whose
  // agent wrote a method table: perf-java --interp).
  const InterpretedWalkStats& w = stats.interpreted;
  out["interpreted_frames"] = {
      {"jvms_with_method_table", stats.jvms_with_method_table},
      {"walks", w.walks},
      {"walks_complete", w.walks_outermost},
      {"walks_copy_ended", w.walks_copy_ended},
      {"walks_complete_share", w.walks == 0 ? 0.0 : static_cast<double>(w.walks_outermost) / static_cast<double>(w.walks)},
      {"frames", w.frames},
      {"named", w.named},
      {"covered", w.covered},
      {"named_share", w.frames == 0 ? 0.0 : static_cast<double>(w.named) / static_cast<double>(w.frames)},
      {"covered_named_share", w.covered == 0 ? 0.0 : static_cast<double>(w.named) / static_cast<double>(w.covered)},
      {"top_in_method_entry", w.top_in_entry},
  };
  return out;
}

}  // namespace jitdump::report
