// The writer thread end to end, without a JVM: batches built as the callbacks build them go
// through the real queue into a real file.
#include "agent/writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/deferred_load.h"
#include "agent/load_builder.h"
#include "test_dump_reader.h"

namespace jitdump_agent {
namespace {

using test_support::TestRecord;

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/writer_test.XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    options_.dir = dir_;
    options_.perfmap_dir = dir_;
    options_.flush_ms = 1;
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }

  void PushLoad(RecordQueue& queue, Stats& stats, uint64_t ts, uint64_t addr, uint64_t size, const std::string& name,
                std::span<const LineRow> rows = {}) {
    std::vector<uint8_t> code(size, 0xc3);
    LoadInput in;
    in.timestamp = ts;
    in.pid = 1;
    in.tid = 2;
    in.code_addr = addr;
    in.code_size = size;
    in.code = code.data();
    in.name = name;
    in.rows = rows;
    Batch* batch = BuildLoadBatch(queue, stats, in);
    ASSERT_NE(batch, nullptr);
    ASSERT_TRUE(queue.Push(batch));
  }
  void PushUnload(RecordQueue& queue, uint64_t ts, uint64_t addr) {
    ASSERT_TRUE(queue.Push(BuildUnloadBatch(queue, ts, addr)));
  }

  std::string dir_;
  Options options_;
};

TEST_F(WriterTest, WritesIndexesInFileOrderAndDebugInfoBeforeItsLoad) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(4242, 1000));
  writer.Start();
  const std::string file = "p/A.java";
  const LineRow rows[] = {{0x1000, &file, 10}, {0x1010, &file, 11}};
  PushLoad(queue, stats, 5000, 0x1000, 0x40, "p.A.run()", rows);
  PushLoad(queue, stats, 5001, 0x2000, 0x20, "Interpreter");
  writer.Finish(9000, 5000);

  EXPECT_EQ(writer.dump_path(), dir_ + "/jit-4242.dump");
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].id, 2u);
  EXPECT_EQ(records[0].code_addr, 0x1000u);
  ASSERT_EQ(records[0].entries.size(), 2u);
  EXPECT_EQ(records[0].entries[1].line, 11);
  EXPECT_EQ(records[0].entries[1].file, "p/A.java");
  EXPECT_EQ(records[1].id, 0u);
  EXPECT_EQ(records[1].name, "p.A.run()");
  EXPECT_EQ(records[1].code_index, 1u);
  EXPECT_EQ(records[1].code.size(), 0x40u);
  EXPECT_EQ(records[1].code[0], 0xc3);
  EXPECT_EQ(records[2].code_index, 2u);
  EXPECT_EQ(records[3].id, 3u);  // CLOSE
  EXPECT_EQ(records[3].timestamp, 9000u);
  EXPECT_EQ(stats.code_loads_written.Get(), 2u);
  EXPECT_EQ(stats.debug_entries_written.Get(), 2u);
  struct stat st;
  ASSERT_EQ(stat(writer.dump_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(WriterTest, BackdatesToJustAfterTheLastTouchOfTheRangeAndNoFurther) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, stats, 5000, 0x1000, 0x100, "first");   // fresh range: back to the start time
  PushUnload(queue, 6000, 0x1000);
  PushLoad(queue, stats, 7000, 0x1080, 0x100, "second");  // reuses freed memory: after the unload
  PushLoad(queue, stats, 7500, 0x9000, 0x10, "third");
  writer.Finish(9000, 5000);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].timestamp, 1000u);
  EXPECT_EQ(records[1].timestamp, 6001u);
  EXPECT_EQ(records[2].timestamp, 1000u);
  EXPECT_EQ(stats.backdated_loads.Get(), 3u);
}

TEST_F(WriterTest, BackdateOffKeepsCallbackTimestamps) {
  options_.backdate = false;
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, stats, 5000, 0x1000, 0x100, "first");
  writer.Finish(9000, 5000);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  ASSERT_GE(records.size(), 1u);
  EXPECT_EQ(records[0].timestamp, 5000u);
}

TEST_F(WriterTest, ReplayDuplicatesAreSkippedButReusedAddressesAreNot) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, stats, 2000, 0x1000, 0x100, "A.f()");
  PushLoad(queue, stats, 2001, 0x1000, 0x100, "A.f()");  // GenerateEvents replay of the same code
  PushUnload(queue, 3000, 0x1000);
  PushLoad(queue, stats, 4000, 0x1000, 0x100, "A.f()");  // recompiled at the same address
  writer.Finish(9000, 5000);
  EXPECT_EQ(stats.duplicate_loads.Get(), 1u);
  EXPECT_EQ(stats.code_loads_written.Get(), 2u);
}

// Replayed stubs fill gaps only: a container or a renamed copy of a known blob is dropped, a
// blob HotSpot never posted live is kept.
TEST_F(WriterTest, ReplayedStubsAreWrittenOnlyWhereNothingIsKnown) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, stats, 2000, 0x1000, 0x100, "I2C/C2I adapters(0xabc)");
  PushLoad(queue, stats, 2001, 0x1100, 0x100, "call_stub");
  auto replay = [&](uint64_t addr, uint64_t size, const char* name) {
    std::vector<uint8_t> code(size, 0xcc);
    LoadInput in;
    in.timestamp = 3000;
    in.code_addr = addr;
    in.code_size = size;
    in.code = code.data();
    in.name = name;
    in.replayed = true;
    in.dynamic_code = true;
    ASSERT_TRUE(queue.Push(BuildLoadBatch(queue, stats, in)));
  };
  replay(0x1000, 0x100, "I2C/C2I adapters");  // same blob, replay's name
  replay(0x0f00, 0x400, "adapters");          // enclosing BufferBlob
  replay(0x9000, 0x80, "InlineCacheBuffer");  // never posted live
  replay(0xa000, 0x800, "C1 temporary CodeBuffer");  // scratch: never runs
  writer.Finish(9000, 5000);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  std::vector<std::string> names;
  for (const auto& r : records) {
    if (r.id == 0) names.push_back(r.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"I2C/C2I adapters(0xabc)", "call_stub", "InlineCacheBuffer"}));
  EXPECT_EQ(stats.duplicate_loads.Get(), 3u);
}

TEST_F(WriterTest, PerfMapHoldsOnlyLiveCodeAtExit) {
  options_.perfmap = true;
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(77, 1000));
  writer.Start();
  PushLoad(queue, stats, 2000, 0x1000, 0x100, "dead.Method()");
  PushLoad(queue, stats, 2001, 0x3000, 0x80, "live.Method(int[])");
  PushUnload(queue, 2500, 0x1000);
  PushLoad(queue, stats, 2600, 0x1040, 0x20, "reused.Here()");
  writer.Finish(9000, 5000);
  std::ifstream in(dir_ + "/perf-77.map");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "1040 20 reused.Here()\n3000 80 live.Method(int[])\n");
  // At least the final compaction; a stale line also triggers one mid-run.
  EXPECT_GE(stats.perfmap_compactions.Get(), 1u);
}

TEST_F(WriterTest, BudgetOverflowIsCountedNotSilent) {
  options_.budget_bytes = 64 << 10;
  Stats stats;
  RecordQueue queue(options_, stats);
  int pushed = 0;
  for (int i = 0; i < 100; ++i) {
    std::vector<uint8_t> code(4096, 0x90);
    LoadInput in;
    in.code_addr = 0x1000 * static_cast<uint64_t>(i + 1);
    in.code_size = code.size();
    in.code = code.data();
    in.name = "big";
    if (Batch* b = BuildLoadBatch(queue, stats, in)) pushed += queue.Push(b);
  }
  EXPECT_GT(pushed, 0);
  EXPECT_LT(pushed, 100);
  EXPECT_EQ(static_cast<uint64_t>(100 - pushed), stats.lost_budget.Get());
  EXPECT_LE(stats.queue_bytes_high.Get(), 64u << 10);
  while (Batch* b = queue.Pop()) queue.Free(b);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

// overflow=wait: a producer that finds the budget full wakes the writer and waits for room,
// so nothing is lost even when the writer's poll interval is far longer than the wait.
TEST_F(WriterTest, OverflowWaitWakesTheWriterAndLosesNothing) {
  options_.budget_bytes = 64 << 10;
  options_.overflow = Overflow::kWait;
  options_.wait_ms = 2000;
  options_.flush_ms = 1000;
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> code(4096, 0x90);
    LoadInput in;
    in.code_addr = 0x10000ull * static_cast<uint64_t>(i + 1);
    in.code_size = code.size();
    in.code = code.data();
    in.name = "big";
    if (Batch* b = BuildLoadBatch(queue, stats, in)) queue.Push(b);
  }
  writer.Finish(9000, 10000);
  EXPECT_EQ(stats.LostTotal(), 0u);
  EXPECT_EQ(stats.code_loads_written.Get(), 200u);
  EXPECT_LE(stats.queue_bytes_high.Get(), 64u << 10);
}

TEST_F(WriterTest, UnwritableDirectoryFailsOpenWithoutCrashing) {
  options_.dir = "/proc/definitely/not/writable";
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  EXPECT_FALSE(writer.Open(1, 1000));
}

TEST_F(WriterTest, ConcurrentProducersLoseNothing) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        std::vector<uint8_t> code(64, 0x90);
        LoadInput in;
        in.timestamp = 5000;
        in.code_addr = 0x100000ull * static_cast<uint64_t>(t + 1) + static_cast<uint64_t>(i) * 0x100;
        in.code_size = code.size();
        in.code = code.data();
        in.name = "m";
        Batch* b = BuildLoadBatch(queue, stats, in);
        if (b) queue.Push(b);
      }
    });
  }
  for (auto& p : producers) p.join();
  writer.Finish(9000, 10000);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  EXPECT_EQ(records.size(), 8001u);
  EXPECT_EQ(stats.LostTotal(), 0u);
  std::vector<bool> seen(8001, false);
  for (const TestRecord& r : records) {
    if (r.id != 0) continue;
    ASSERT_LT(r.code_index, seen.size());
    EXPECT_FALSE(seen[r.code_index]);
    seen[r.code_index] = true;
  }
}

// Stands in for the JVMTI resolver: names a deferred load after its address, and records which
// thread does what.
class FakeResolver final : public LoadResolver {
 public:
  FakeResolver(RecordQueue& queue, Stats& stats) : queue_(queue), stats_(stats) {}
  bool Attach() override {
    attach_thread = std::this_thread::get_id();
    attached = true;
    return true;
  }
  Batch* Resolve(Batch& deferred) override {
    if (!attached) ++resolved_detached;
    if (std::this_thread::get_id() != attach_thread) ++resolved_elsewhere;
    const CompiledLoadEvent event = ReadDeferredLoad(deferred);
    const std::string name = "resolved@" + std::to_string(event.code_addr) + "/" + std::to_string(event.frames.size());
    LoadInput in;
    in.timestamp = event.timestamp;
    in.code_addr = event.code_addr;
    in.code_size = event.code_size;
    in.code = event.code;
    in.name = name;
    in.replaces = &deferred;
    ++resolved;
    return BuildLoadBatch(queue_, stats_, in);
  }
  void Detach() override {
    if (std::this_thread::get_id() != attach_thread) ++resolved_elsewhere;
    attached = false;
    ++detaches;
  }

  std::thread::id attach_thread;
  std::atomic<bool> attached{false};
  int resolved = 0, resolved_detached = 0, resolved_elsewhere = 0, detaches = 0;

 private:
  RecordQueue& queue_;
  Stats& stats_;
};

void PushDeferred(RecordQueue& queue, uint64_t ts, uint64_t addr, size_t frames) {
  std::vector<uint8_t> code(0x20, 0x90);
  std::vector<ScopeFrame> scope(frames, ScopeFrame{nullptr, 1});
  const ScopePc pc{addr + 0x10, 0, static_cast<uint32_t>(frames)};
  CompiledLoadEvent event;
  event.timestamp = ts;
  event.code_addr = addr;
  event.code_size = code.size();
  event.code = code.data();
  event.pcs = std::span<const ScopePc>(&pc, frames != 0 ? 1 : 0);
  event.frames = scope;
  Batch* batch = BuildDeferredLoad(queue, event);
  ASSERT_NE(batch, nullptr);
  ASSERT_TRUE(queue.Push(batch));
}

TEST_F(WriterTest, DeferredLoadsAreResolvedOnTheAttachedWriterThreadBeforeItDetaches) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  FakeResolver resolver(queue, stats);
  writer.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, stats, 5000, 0x1000, 0x20, "before");  // resolved in its callback
  writer.BeginResolving();
  for (int i = 0; i < 5000 && !resolver.attached; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(resolver.attached);
  PushDeferred(queue, 5001, 0x2000, 3);
  PushUnload(queue, 5002, 0x2000);
  PushDeferred(queue, 5003, 0x2000, 0);  // reuses the address after the unload
  EXPECT_TRUE(writer.EndResolving(5000));
  EXPECT_FALSE(resolver.attached);
  EXPECT_EQ(resolver.resolved, 2);  // all queued before EndResolving, resolved before it returned
  writer.Finish(9000, 5000);

  EXPECT_EQ(resolver.detaches, 1);
  EXPECT_EQ(resolver.resolved_detached, 0);
  EXPECT_EQ(resolver.resolved_elsewhere, 0);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  std::vector<std::string> names;
  for (const TestRecord& r : records) {
    if (r.id == 0) names.push_back(r.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"before", "resolved@8192/3", "resolved@8192/0"}));
  EXPECT_EQ(stats.LostTotal(), 0u);
  EXPECT_EQ(stats.resolve_latency.count(), 2u);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

TEST_F(WriterTest, DeferredLoadsWithoutAResolverAreCountedLost) {
  Stats stats;
  RecordQueue queue(options_, stats);
  Writer writer(options_, stats, queue);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  writer.BeginResolving();  // nothing to attach: a no-op
  PushDeferred(queue, 5001, 0x2000, 1);
  EXPECT_TRUE(writer.EndResolving(5000));
  writer.Finish(9000, 5000);
  EXPECT_EQ(stats.lost_unresolved.Get(), 1u);
  EXPECT_EQ(stats.LostTotal(), 1u);
  EXPECT_EQ(stats.code_loads_written.Get(), 0u);
}

}  // namespace
}  // namespace jitdump_agent
