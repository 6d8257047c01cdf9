// Flood: synthetic producers far faster than the "disk", against the agent's byte budget.
//
//   build-bench/scripts/bench/flood_bench [--benchmark_format=json]
//   FLOOD_SECONDS=N (default 1) sets how long each flood lasts.
//
// The writer thread is replaced by a drain loop that calls Writer::ProcessAvailable (the writer
// thread's own loop body) only every DRAIN_MS (default 20 ms): a disk that stalls, so the
// producers (1.7 KB code + merged line rows per record, as fast as they can encode) fill the
// budget between drains. Each run checks, and fails the program (exit 1) otherwise:
//   - the queue never held more than the budget (sampled continuously and the agent's own
//     high-water mark), and nothing is held once drained;
//   - every offered record is written, counted lost, or skipped as a duplicate of the live code
//     at its address: lost == offered - written - duplicates;
//   - with overflow=drop the losses are all budget losses; the dump on disk holds exactly
//     `written` CODE_LOAD records and parses without errors;
//   - peak RSS grew by at most budget + 16 MiB (allocator slack) while flooding.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "agent/core/lifecycle.h"
#include "agent/core/record_queue.h"
#include "agent/core/writer.h"
#include "bench_common.h"
#include "jitdump/read/decoder.h"

namespace {

using namespace jitdump_agent;

std::atomic<bool> g_failed{false};

uint64_t Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double EnvDouble(const char* name, double fallback) {
  const char* v = getenv(name);
  return v && *v ? atof(v) : fallback;
}

// Current and peak resident set of this process, in bytes.
uint64_t StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::stoull(line.substr(n + 1)) * 1024;
  }
  return 0;
}

// Makes VmHWM restart from the current RSS (Linux >= 4.0), so each run sees its own peak.
void ResetPeakRss() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

void Fail(benchmark::State& state, const std::string& what) {
  std::fprintf(stderr, "flood: FAILED: %s\n", what.c_str());
  g_failed = true;
  state.SkipWithError(what.c_str());
}

// range(0): 0 = overflow=drop, 1 = overflow=wait; range(1): producers; range(2): budget in MiB.
void BM_Flood(benchmark::State& state) {
  const bool wait = state.range(0) != 0;
  const int producers = static_cast<int>(state.range(1));
  const uint64_t budget = static_cast<uint64_t>(state.range(2)) << 20;
  const double seconds = EnvDouble("FLOOD_SECONDS", 1.0);
  const auto drain_period = std::chrono::milliseconds(static_cast<int>(EnvDouble("DRAIN_MS", 20)));
  static const bench::Corpus corpus(256, 1740, 50);

  for (auto _ : state) {
    bench::ScratchDir dir;
    Options options;
    options.dir = dir.path();
    options.budget_bytes = budget;
    options.overflow = wait ? Overflow::kWait : Overflow::kDrop;
    options.wait_ms = 100;
    Stats stats;
    RecordQueue queue(options, stats);
    Lifecycle lifecycle;
    Writer writer(options, stats, queue, lifecycle);
    if (!writer.Open(static_cast<uint32_t>(getpid()), Now())) {
      Fail(state, "cannot open the dump");
      break;
    }
    ResetPeakRss();
    const uint64_t rss_before = StatusKb("VmRSS:");
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> offered{0};
    std::atomic<uint64_t> max_in_flight{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (size_t i = static_cast<size_t>(p); !stop.load(std::memory_order_relaxed);
             i += static_cast<size_t>(producers)) {
          offered.fetch_add(1, std::memory_order_relaxed);
          if (CodeEvent* event = corpus.Event(queue, i, Now())) queue.Push(event);
          const uint64_t held = queue.bytes_in_flight();
          uint64_t seen = max_in_flight.load(std::memory_order_relaxed);
          while (held > seen && !max_in_flight.compare_exchange_weak(seen, held)) {
          }
        }
      });
    }
    std::thread disk([&] {
      while (!stop.load()) {
        std::this_thread::sleep_for(drain_period);
        writer.ProcessAvailable();
      }
    });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    disk.join();
    while (writer.ProcessAvailable() != 0) {
    }
    const uint64_t rss_peak = StatusKb("VmHWM:");
    const std::string path = writer.dump_path();
    writer.Finish(Now(), 1000);  // no thread: closes nothing; the dump closes with the writer

    const uint64_t n_offered = offered.load();
    const uint64_t written = stats.code_loads_written.Get();
    const uint64_t lost = stats.LostTotal();
    state.counters["offered"] = static_cast<double>(n_offered);
    state.counters["written"] = static_cast<double>(written);
    state.counters["lost"] = static_cast<double>(lost);
    state.counters["lost_budget"] = static_cast<double>(stats.lost_budget.Get());
    state.counters["duplicates"] = static_cast<double>(stats.duplicate_loads.Get());
    state.counters["queue_high_MiB"] = static_cast<double>(stats.queue_bytes_high.Get()) / 1048576.0;
    state.counters["sampled_high_MiB"] = static_cast<double>(max_in_flight.load()) / 1048576.0;
    state.counters["budget_MiB"] = static_cast<double>(budget) / 1048576.0;
    state.counters["rss_peak_growth_MiB"] =
        rss_peak > rss_before ? static_cast<double>(rss_peak - rss_before) / 1048576.0 : 0.0;
    state.counters["offered_per_s"] = static_cast<double>(n_offered) / seconds;
    state.counters["written_per_s"] = static_cast<double>(written) / seconds;

    if (stats.queue_bytes_high.Get() > budget) Fail(state, "queue high-water exceeds the budget");
    if (max_in_flight.load() > budget) Fail(state, "bytes in flight exceeded the budget");
    if (queue.bytes_in_flight() != 0 || queue.records_in_flight() != 0) Fail(state, "records still held after drain");
    // The corpus repeats a (slot, load) pair every 4093 * 256 records: when the pair's earlier
    // record is still the live code at that address, the writer skips the repeat as a duplicate.
    const uint64_t duplicates = stats.duplicate_loads.Get();
    if (lost != n_offered - written - duplicates) {
      Fail(state, "accounting: lost " + std::to_string(lost) + " != offered " + std::to_string(n_offered) +
                      " - written " + std::to_string(written) + " - duplicates " + std::to_string(duplicates));
    }
    if (!wait && lost != stats.lost_budget.Get() + stats.lost_queue_full.Get()) {
      Fail(state, "overflow=drop lost records for a reason other than the budget");
    }
    if (!wait && lost == 0) Fail(state, "overflow=drop flood lost nothing: the producers did not outrun the drain");
    if (rss_peak > rss_before && rss_peak - rss_before > budget + (16ull << 20)) {
      Fail(state, "peak RSS grew by " + std::to_string((rss_peak - rss_before) >> 20) + " MiB, more than budget + 16 MiB");
    }
    // The file holds exactly what the stats say was written.
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const jitdump::JitDump dump = jitdump::Parse(bytes);
    const uint64_t loads = static_cast<uint64_t>(std::count_if(
        dump.records.begin(), dump.records.end(), [](const jitdump::Record& r) { return r.load() != nullptr; }));
    if (!dump.header_ok || loads != written) {
      Fail(state, "dump holds " + std::to_string(loads) + " loads, stats say " + std::to_string(written));
    }
    state.counters["file_loads"] = static_cast<double>(loads);
  }
}
BENCHMARK(BM_Flood)
    ->ArgNames({"wait", "producers", "budget_MiB"})
    ->Args({0, 1, 4})
    ->Args({0, 2, 4})
    ->Args({1, 2, 4})
    ->Args({0, 2, 16})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_failed) {
    std::fprintf(stderr, "flood: FAILED (see above)\n");
    return 1;
  }
  std::fprintf(stderr, "flood: every run stayed within its budget and lost exactly offered - written - duplicates\n");
  return 0;
}
