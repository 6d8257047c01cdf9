// Writer throughput and encoder microbenchmarks (Google Benchmark).
//
//   build-bench/scripts/bench/writer_bench [--benchmark_filter=...] [--benchmark_format=json]
//
// Pipeline/P: P producer threads queue realistic loads (1.7 KB code, 50 PcDescs -> merged line
// rows, ~110-byte names) as the agent's callbacks do (one code event each), through the real
// RecordQueue, and the real Writer thread encodes and writes them to a real file (page cache;
// set BENCH_TMPDIR to put it elsewhere). One iteration = all records written, the dump closed.
// overflow=wait, so nothing is dropped: the figure is the sustained rate. Compare with
// Memcpy (memory bandwidth for the same bytes) and RawWrite (the file system with no encoding).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "agent/core/dump_batch.h"
#include "agent/core/lifecycle.h"
#include "agent/core/inline_tree.h"
#include "agent/core/line_map.h"
#include "agent/core/record_queue.h"
#include "agent/core/writer.h"
#include "bench_common.h"
#include "jitdump/write/encoder.h"

namespace {

using namespace jitdump_agent;

constexpr size_t kCodeSize = 1740;  // javac average (§9)
constexpr size_t kPcDescs = 50;     // javac average numpcs (§9)

const bench::Corpus& TheCorpus() {
  static const bench::Corpus corpus(256, kCodeSize, kPcDescs);
  return corpus;
}

uint64_t Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- encoder microbenchmarks -------------------------------------------------------------

void BM_BuildLineRows(benchmark::State& state) {
  const auto& c = TheCorpus();
  const uint64_t start = bench::Corpus::CodeAddr(0);
  size_t rows = 0;
  for (auto _ : state) {
    auto r = BuildLineRows(start, start + kCodeSize, c[0].sites);
    rows += r.size();
    benchmark::DoNotOptimize(r.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rows_per_load"] = static_cast<double>(rows) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_BuildLineRows);

void BM_InlineTreeBuild(benchmark::State& state) {
  const auto& c = TheCorpus();
  const uint64_t start = bench::Corpus::CodeAddr(0);
  InlineTreeBuilder builder;
  size_t bytes = 0;
  for (auto _ : state) {
    const auto* info = builder.Build(1, start, kCodeSize, c.root(), c[0].sites);
    benchmark::DoNotOptimize(info);
    if (info) bytes += jitdump::InlineDebugInfoSize(*info);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["record_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_InlineTreeBuild);

// With a fresh builder (fresh vectors and hash maps) per load, for comparison.
void BM_InlineTreeBuildFresh(benchmark::State& state) {
  const auto& c = TheCorpus();
  const uint64_t start = bench::Corpus::CodeAddr(0);
  for (auto _ : state) {
    InlineTreeBuilder builder;
    benchmark::DoNotOptimize(builder.Build(1, start, kCodeSize, c.root(), c[0].sites));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InlineTreeBuildFresh);

// Everything a CompiledMethodLoad callback that resolves in place does after its JVMTI lookups,
// for one realistic load (50 PcDescs, 1.7 KB): line rows, the named code event (a copy), the
// push; range(0)=1 adds the inline record (inline=on). The writer side pops and frees.
void BM_CallbackWork(benchmark::State& state) {
  const bool with_inline = state.range(0) != 0;
  const auto& c = TheCorpus();
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  InlineTreeBuilder builder;
  std::vector<LineRow> rows;
  std::vector<jitdump::DebugEntry> entries;
  size_t i = 0;
  for (auto _ : state) {
    const bench::SyntheticLoad& l = c[i];
    const uint64_t start = bench::Corpus::CodeAddr(i % c.size());
    BuildLineRows(start, start + kCodeSize, l.sites, true, rows);
    entries.clear();
    for (const LineRow& row : rows) entries.push_back({row.addr, row.line, 0, *row.file});
    CodeBlob blob;
    blob.code_addr = start;
    blob.code_size = l.code.size();
    blob.code = l.code.data();
    LoadNames names;
    names.name = l.name;
    names.perf_map_name = l.name;
    names.lines = entries;
    if (with_inline) names.inline_info = builder.Build(1, start, kCodeSize, c.root(), l.sites);
    queue.Push(NewNamedLoad(queue, EventKind::kCompiledLoad, blob, names));
    queue.Free(queue.Pop());
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CallbackWork)->ArgName("inline")->Arg(0)->Arg(1);

void BM_EncodeDebugInfo(benchmark::State& state) {
  const auto& c = TheCorpus();
  std::vector<jitdump::DebugEntry> entries;
  for (const LineRow& r : c[0].rows) entries.push_back({r.addr, r.line, 0, *r.file});
  const size_t size = jitdump::DebugInfoSize(entries);
  std::vector<uint8_t> out(size);
  for (auto _ : state) {
    benchmark::DoNotOptimize(jitdump::EncodeDebugInfo(1, bench::Corpus::CodeAddr(0), entries, out.data()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
  state.counters["entries"] = static_cast<double>(entries.size());
}
BENCHMARK(BM_EncodeDebugInfo);

void BM_EncodeCodeLoad(benchmark::State& state) {
  const auto& c = TheCorpus();
  jitdump::CodeLoad load;
  load.code_addr = load.vma = bench::Corpus::CodeAddr(0);
  load.code_size = kCodeSize;
  load.name = c[0].name;
  load.code = c[0].code.data();
  const size_t size = jitdump::CodeLoadSize(load);
  std::vector<uint8_t> out(size);
  for (auto _ : state) {
    benchmark::DoNotOptimize(jitdump::EncodeCodeLoad(load, out.data()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}
BENCHMARK(BM_EncodeCodeLoad);

// The copy a callback that resolved its load makes: one budgeted code event holding the code,
// name and rows. The writer side frees.
void BM_NewNamedLoad(benchmark::State& state) {
  const auto& c = TheCorpus();
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    CodeEvent* event = c.Event(queue, i++, 1);
    bytes += event->accounted;
    queue.Free(event);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["event_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_NewNamedLoad);

// The writer's encoding of one load (DEBUG_INFO + CODE_LOAD head into its batch buffer; the
// code bytes are written from the event).
void BM_EncodeLoad(benchmark::State& state) {
  const auto& c = TheCorpus();
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  CodeEvent* event = c.Event(queue, 0, 1);
  DumpBatch batch;
  uint64_t index = 1;
  for (auto _ : state) {
    batch.Add(*event, event->names, 1, 1, index++);
    if (batch.full()) batch.Clear();
  }
  queue.Free(event);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeLoad);

void BM_QueuePushPop(benchmark::State& state) {
  Options options;
  Stats stats;
  RecordQueue queue(options, stats);
  for (auto _ : state) {
    CodeEvent* event = queue.Allocate(0);
    queue.Push(event);
    queue.Free(queue.Pop());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueuePushPop);

// ---- the whole pipeline: encode + queue + write ------------------------------------------

void BM_Pipeline(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  const size_t records = static_cast<size_t>(state.range(1));
  const auto& c = TheCorpus();
  bench::ScratchDir dir;
  Options options;
  options.dir = dir.path();
  options.overflow = Overflow::kWait;
  options.wait_ms = 60000;
  options.flush_ms = 1;
  uint64_t bytes = 0, written = 0, lost = 0, iteration = 0;
  for (auto _ : state) {
    Stats stats;
    RecordQueue queue(options, stats);
    Lifecycle lifecycle;
    Writer writer(options, stats, queue, lifecycle);
    const uint32_t pid = 100000 + static_cast<uint32_t>(iteration++);
    if (!writer.Open(pid, Now())) {
      state.SkipWithError("cannot open the dump");
      break;
    }
    writer.Start();
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (size_t i = static_cast<size_t>(p); i < records; i += static_cast<size_t>(producers)) {
          if (CodeEvent* event = c.Event(queue, i, Now())) queue.Push(event);
        }
      });
    }
    for (auto& t : threads) t.join();
    writer.Finish(Now(), 600000);
    bytes += stats.bytes_written.Get();
    written += stats.code_loads_written.Get();
    lost += stats.LostTotal();
    state.PauseTiming();
    ::unlink(writer.dump_path().c_str());
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(written));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["lost"] = static_cast<double>(lost);
  state.counters["bytes_per_record"] = written ? static_cast<double>(bytes) / static_cast<double>(written) : 0;
}
BENCHMARK(BM_Pipeline)
    ->ArgNames({"producers", "records"})
    ->Args({1, 20000})
    ->Args({2, 20000})
    ->Args({4, 20000})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- references: memory bandwidth and the file system --------------------------------------

// The bytes one pipeline record writes, copied with memcpy (read + write of each byte).
void BM_Memcpy(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> src(size, 1), dst(size);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), size);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}
BENCHMARK(BM_Memcpy)->Arg(64 << 20);

// write() of 1 MiB blocks to a fresh file in the scratch directory, 64 MiB per iteration,
// plus one fdatasync when range(0) is 1 (the device, not only the page cache).
void BM_RawWrite(benchmark::State& state) {
  const bool sync = state.range(0) != 0;
  bench::ScratchDir dir;
  const std::string path = dir.path() + "/raw";
  std::vector<uint8_t> block(1 << 20, 0x5a);
  constexpr size_t kBlocks = 64;
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    for (size_t i = 0; i < kBlocks; ++i) {
      if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
        state.SkipWithError("write failed");
        break;
      }
    }
    if (sync) ::fdatasync(fd);
    ::close(fd);
    state.PauseTiming();
    ::unlink(path.c_str());
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBlocks * block.size()));
}
BENCHMARK(BM_RawWrite)->ArgName("fdatasync")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
