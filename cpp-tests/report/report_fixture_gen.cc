// Writes the report outputs of a test profile for the consumer tests (go tool pprof, Chromium):
//   report_fixture_gen inline OUTDIR             the known-inlining profile (test_profiles.h)
//   report_fixture_gen synthetic OUTDIR SAMPLES [scattered]
//                                                the large synthetic profile (service-shaped, or
//                                                the scattered worst case)
// OUTDIR receives profile.pb.gz, flamegraph.html and manifest.json. The manifest describes the
// input, not the outputs: for `inline` the whole Profile (so a test derives what a consumer must
// show on its own), for `synthetic` its sizes and, per search query, the samples whose stacks
// hold a matching frame, counted straight from the samples. It also carries the writers' times.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cpp-tests/report/test_profiles.h"
#include "jitdump/report/flamegraph_writer.h"
#include "jitdump/report/pprof_writer.h"

namespace {

using jitdump::report::Profile;
using nlohmann::json;

json ProfileJson(const Profile& p) {
  json out;
  for (const auto& f : p.functions) {
    out["functions"].push_back({{"name", f.name}, {"file", f.file}, {"kind", FrameKindName(f.kind)}});
  }
  for (const auto& m : p.mappings) {
    out["mappings"].push_back({{"file", m.file}, {"start", m.start}, {"limit", m.limit}, {"offset", m.offset}});
  }
  for (const auto& l : p.locations) {
    json lines = json::array();
    for (const auto& line : l.lines) lines.push_back({{"function", line.function}, {"line", line.line}});
    out["locations"].push_back({{"address", l.address}, {"mapping", l.mapping}, {"lines", lines}});
  }
  for (const auto& s : p.samples) {
    out["samples"].push_back({{"locations", s.locations}, {"process", s.process}, {"thread", p.threads[s.thread]},
                              {"count", s.count}, {"nanos", s.nanos}});
  }
  for (const auto& pr : p.processes) {
    out["processes"].push_back({{"pid", pr.pid}, {"command", pr.command}, {"dump", pr.dump}});
  }
  out["period_ns"] = p.period_ns;
  return out;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Samples whose stack holds a frame whose name contains `query` (case-insensitive), as the
// page's plain-text search defines a match.
uint64_t SamplesMatching(const Profile& p, const std::string& query) {
  const std::string q = Lower(query);
  std::vector<bool> match(p.functions.size());
  for (size_t f = 0; f < p.functions.size(); ++f) match[f] = Lower(p.functions[f].name).find(q) != std::string::npos;
  uint64_t samples = 0;
  for (const auto& s : p.samples) {
    bool hit = false;
    for (uint32_t l : s.locations) {
      for (const auto& line : p.locations[l].lines) hit = hit || match[line.function];
    }
    if (hit) samples += s.count;
  }
  return samples;
}

double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// A field of /proc/self/status in kB ("VmRSS:", "VmHWM:"), 0 when missing.
long StatusKb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
  }
  return 0;
}

// Sets the peak (VmHWM) back to the current size, so the next peak is the writer's alone.
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Writes one output and records its wall and CPU time (CPU time is what a loaded machine does
// not inflate) as NAME_ms and NAME_cpu_ms, and the growth of the process's peak memory while
// writing as NAME_peak_rss_growth_kb, in the manifest.
template <typename Write>
void TimedWrite(const std::filesystem::path& path, json& manifest, const std::string& name, Write write) {
  const double cpu = CpuMs();
  ResetPeakRss();
  const long rss = StatusKb("VmRSS:");
  const auto start = std::chrono::steady_clock::now();
  std::ofstream out(path, std::ios::binary);
  const jitdump::Status status = write(out);
  out.close();
  if (!status.ok() || !out) {
    std::fprintf(stderr, "report_fixture_gen: writing %s: %s\n", path.c_str(), status.ToString().c_str());
    std::exit(1);
  }
  manifest[name + "_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  manifest[name + "_cpu_ms"] = CpuMs() - cpu;
  manifest[name + "_peak_rss_growth_kb"] = StatusKb("VmHWM:") - rss;
}

}  // namespace

int main(int argc, char** argv) {
  const bool synthetic = (argc == 4 || argc == 5) && std::strcmp(argv[1], "synthetic") == 0;
  const bool scattered = argc == 5 && std::strcmp(argv[4], "scattered") == 0;
  if ((!(argc == 3 && std::strcmp(argv[1], "inline") == 0) && !synthetic) || (argc == 5 && !scattered)) {
    std::fprintf(stderr, "usage: report_fixture_gen inline OUTDIR | synthetic OUTDIR SAMPLES [scattered]\n");
    return 2;
  }
  const std::filesystem::path dir = argv[2];
  std::filesystem::create_directories(dir);
  const auto built_at = std::chrono::steady_clock::now();
  const Profile profile = synthetic ? jitdump::report::testing::SyntheticProfile(
                                          std::stoull(argv[3]), 12,
                                          scattered ? jitdump::report::testing::SyntheticShape::kScattered
                                                    : jitdump::report::testing::SyntheticShape::kService)
                                    : jitdump::report::testing::InlineDemoProfile();
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - built_at).count();
  jitdump::report::FlameGraphOptions options;
  options.title = synthetic ? "Synthetic profile" : "Inline demo <&> \"profile\"";
  json manifest;
  manifest["profile_rss_kb"] = StatusKb("VmRSS:");
  TimedWrite(dir / "profile.pb.gz", manifest, "write_pprof",
             [&](std::ostream& out) { return WritePprof(profile, out); });
  TimedWrite(dir / "flamegraph.html", manifest, "write_html",
             [&](std::ostream& out) { return WriteFlameGraphHtml(profile, options, out); });
  manifest["build_profile_ms"] = build_ms;
  manifest["title"] = options.title;
  uint64_t total = 0;
  for (const auto& s : profile.samples) total += s.count;
  manifest["samples"] = total;
  manifest["distinct_stacks"] = profile.samples.size();
  manifest["locations"] = profile.locations.size();
  manifest["functions"] = profile.functions.size();
  manifest["shape"] = !synthetic ? "inline" : scattered ? "scattered" : "service";
  for (const char* query : {"com.example.db", "Interpreter", "clear_page_erms", "arraycopy"}) {
    manifest["searches"].push_back({{"query", query}, {"samples", SamplesMatching(profile, query)}});
  }
  if (!synthetic) manifest["profile"] = ProfileJson(profile);
  std::ofstream(dir / "manifest.json") << manifest.dump(1) << '\n';
  return 0;
}
