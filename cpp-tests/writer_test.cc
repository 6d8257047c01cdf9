// The writer thread end to end, without a JVM: code events built as the callbacks build them go
// through the real queue into a real file.
#include "agent/core/writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/core/clock.h"
#include "agent/core/code_event.h"
#include "agent/core/names.h"
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

  // The writer and what it works with, built from the options as the agent builds them. Tests
  // take the members apart: auto& [stats, queue, lifecycle, writer] = pipeline.
  struct Pipeline {
    // The lifecycle as a started session has it: loads named in callbacks until the writer attaches.
    explicit Pipeline(const Options& options) : queue(options, stats), writer(options, stats, queue, lifecycle) {
      (void)lifecycle.Start(nullptr);
    }
    Stats stats;
    RecordQueue queue;
    Lifecycle lifecycle;
    Writer writer;
  };

  // A load as the callbacks queue it once named (a resolved compiled method or a stub).
  static CodeEvent* NamedLoad(RecordQueue& queue, uint64_t ts, uint64_t addr, uint64_t size, const std::string& name,
                              std::span<const jitdump::DebugEntry> lines = {}, bool replayed = false,
                              EventKind kind = EventKind::kCompiledLoad, uint8_t fill = 0xc3) {
    std::vector<uint8_t> code(size, fill);
    CodeBlob blob;
    blob.timestamp = ts;
    blob.tid = 2;
    blob.code_addr = addr;
    blob.code_size = size;
    blob.code = code.data();
    blob.replayed = replayed;
    LoadNames names;
    names.name = name;
    names.perf_map_name = name;
    names.lines = lines;
    return NewNamedLoad(queue, kind, blob, names, kind == EventKind::kStub && IsScratchBuffer(name));
  }
  void PushLoad(RecordQueue& queue, uint64_t ts, uint64_t addr, uint64_t size, const std::string& name,
                std::span<const jitdump::DebugEntry> lines = {}) {
    CodeEvent* load = NamedLoad(queue, ts, addr, size, name, lines);
    ASSERT_NE(load, nullptr);
    ASSERT_TRUE(queue.Push(load));
  }
  void PushUnload(RecordQueue& queue, uint64_t ts, uint64_t addr) {
    ASSERT_TRUE(queue.Push(NewUnload(queue, ts, addr, 0)));
  }
  // The CODE_LOAD names of a dump, in file order.
  static std::vector<std::string> LoadNamesIn(const std::string& dump) {
    std::vector<std::string> names;
    for (const TestRecord& r : test_support::WalkRecords(test_support::ReadFileBytes(dump))) {
      if (r.id == 0) names.push_back(r.name);
    }
    return names;
  }

  std::string dir_;
  Options options_;
};

TEST_F(WriterTest, WritesIndexesInFileOrderAndDebugInfoBeforeItsLoad) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(4242, 1000));
  writer.Start();
  const jitdump::DebugEntry rows[] = {{0x1000, 10, 0, "p/A.java"}, {0x1010, 11, 0, "p/A.java"}};
  PushLoad(queue, 5000, 0x1000, 0x40, "p.A.run()", rows);
  PushLoad(queue, 5001, 0x2000, 0x20, "Interpreter");
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
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, 5000, 0x1000, 0x100, "first");   // fresh range: back to the start time
  PushUnload(queue, 6000, 0x1000);
  PushLoad(queue, 7000, 0x1080, 0x100, "second");  // reuses freed memory: after the unload
  PushLoad(queue, 7500, 0x9000, 0x10, "third");
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
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, 5000, 0x1000, 0x100, "first");
  writer.Finish(9000, 5000);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(writer.dump_path()));
  ASSERT_GE(records.size(), 1u);
  EXPECT_EQ(records[0].timestamp, 5000u);
}

TEST_F(WriterTest, ReplayDuplicatesAreSkippedButReusedAddressesAreNot) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, 2000, 0x1000, 0x100, "A.f()");
  PushLoad(queue, 2001, 0x1000, 0x100, "A.f()");  // GenerateEvents replay of the same code
  PushUnload(queue, 3000, 0x1000);
  PushLoad(queue, 4000, 0x1000, 0x100, "A.f()");  // recompiled at the same address
  writer.Finish(9000, 5000);
  EXPECT_EQ(stats.duplicate_loads.Get(), 1u);
  EXPECT_EQ(stats.code_loads_written.Get(), 2u);
}

// Replayed stubs fill gaps only: a container or a renamed copy of a known blob is dropped, a
// blob HotSpot never posted live is kept.
TEST_F(WriterTest, ReplayedStubsAreWrittenOnlyWhereNothingIsKnown) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, 2000, 0x1000, 0x100, "I2C/C2I adapters(0xabc)");
  PushLoad(queue, 2001, 0x1100, 0x100, "call_stub");
  auto replay = [&](uint64_t addr, uint64_t size, const char* name) {
    ASSERT_TRUE(queue.Push(NamedLoad(queue, 3000, addr, size, name, {}, /*replayed=*/true, EventKind::kStub, 0xcc)));
  };
  replay(0x1000, 0x100, "I2C/C2I adapters");  // same blob, replay's name
  replay(0x0f00, 0x400, "adapters");          // enclosing BufferBlob
  replay(0x9000, 0x80, "InlineCacheBuffer");  // never posted live
  replay(0xa000, 0x800, "C1 temporary CodeBuffer");  // scratch: never runs
  writer.Finish(9000, 5000);
  EXPECT_EQ(LoadNamesIn(writer.dump_path()),
            (std::vector<std::string>{"I2C/C2I adapters(0xabc)", "call_stub", "InlineCacheBuffer"}));
  EXPECT_EQ(stats.duplicate_loads.Get(), 3u);
}

TEST_F(WriterTest, PerfMapHoldsOnlyLiveCodeAtExit) {
  options_.perfmap = true;
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(77, 1000));
  writer.Start();
  PushLoad(queue, 2000, 0x1000, 0x100, "dead.Method()");
  PushLoad(queue, 2001, 0x3000, 0x80, "live.Method(int[])");
  PushUnload(queue, 2500, 0x1000);
  PushLoad(queue, 2600, 0x1040, 0x20, "reused.Here()");
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
    if (CodeEvent* load = NamedLoad(queue, 0, 0x1000 * static_cast<uint64_t>(i + 1), 4096, "big")) {
      pushed += queue.Push(load);
    }
  }
  EXPECT_GT(pushed, 0);
  EXPECT_LT(pushed, 100);
  EXPECT_EQ(static_cast<uint64_t>(100 - pushed), stats.lost_budget.Get());
  EXPECT_LE(stats.queue_bytes_high.Get(), 64u << 10);
  while (CodeEvent* load = queue.Pop()) queue.Free(load);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

// overflow=wait: a producer that finds the budget full wakes the writer and waits for room,
// so nothing is lost even when the writer's poll interval is far longer than the wait.
TEST_F(WriterTest, OverflowWaitWakesTheWriterAndLosesNothing) {
  options_.budget_bytes = 64 << 10;
  options_.overflow = Overflow::kWait;
  options_.wait_ms = 2000;
  options_.flush_ms = 1000;
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  for (int i = 0; i < 200; ++i) {
    if (CodeEvent* load = NamedLoad(queue, 0, 0x10000ull * static_cast<uint64_t>(i + 1), 4096, "big")) queue.Push(load);
  }
  writer.Finish(9000, 10000);
  EXPECT_EQ(stats.LostTotal(), 0u);
  EXPECT_EQ(stats.code_loads_written.Get(), 200u);
  EXPECT_LE(stats.queue_bytes_high.Get(), 64u << 10);
}

TEST_F(WriterTest, UnwritableDirectoryFailsOpenWithoutCrashing) {
  options_.dir = "/proc/definitely/not/writable";
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  EXPECT_FALSE(writer.Open(1, 1000));
}

// Issue #13 item 4: another live writer with the same pid (another pid namespace sharing the
// directory) keeps its files; this one writes the same names in jit-<pid>-2/.
TEST_F(WriterTest, ASecondWriterWithTheSamePidMovesAsideInsteadOfRemovingTheFirstOnesFiles) {
  options_.perfmap = true;
  Stats stats_a, stats_b;
  RecordQueue queue_a(options_, stats_a), queue_b(options_, stats_b);
  Lifecycle lifecycle_a, lifecycle_b;
  Writer a(options_, stats_a, queue_a, lifecycle_a);
  Writer b(options_, stats_b, queue_b, lifecycle_b);
  ASSERT_TRUE(a.Open(1, 1000));
  ASSERT_TRUE(b.Open(1, 1000));
  EXPECT_EQ(a.dump_path(), dir_ + "/jit-1.dump");
  EXPECT_EQ(b.dump_path(), dir_ + "/jit-1-2/jit-1.dump");
  EXPECT_EQ(a.perfmap_path(), dir_ + "/perf-1.map");
  EXPECT_EQ(b.perfmap_path(), dir_ + "/jit-1-2/perf-1.map");
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  PushLoad(queue_a, 5000, 0x1000, 0x40, "p.A.run()");
  PushLoad(queue_b, 5000, 0x2000, 0x40, "p.B.run()");
  a.Finish(9000, 5000);
  b.Finish(9000, 5000);
  EXPECT_EQ(stats_a.code_loads_written.Get(), 1u);
  EXPECT_EQ(stats_b.code_loads_written.Get(), 1u);
  struct stat st {};
  EXPECT_EQ(::stat(a.dump_path().c_str(), &st), 0);
  EXPECT_EQ(::stat(b.dump_path().c_str(), &st), 0);
}

// Issue #13 item 9: a writer that opened its files but could not start its thread removes them.
TEST_F(WriterTest, AbandonRemovesWhatOpenCreated) {
  options_.perfmap = true;
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(3, 1000));
  struct stat st {};
  ASSERT_EQ(::stat(writer.dump_path().c_str(), &st), 0);
  writer.Abandon();
  EXPECT_NE(::stat(writer.dump_path().c_str(), &st), 0);
  EXPECT_NE(::stat(writer.perfmap_path().c_str(), &st), 0);
}

TEST_F(WriterTest, ConcurrentProducersLoseNothing) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const uint64_t addr = 0x100000ull * static_cast<uint64_t>(t + 1) + static_cast<uint64_t>(i) * 0x100;
        if (CodeEvent* load = NamedLoad(queue, 5000, addr, 64, "m")) queue.Push(load);
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
  bool Attach() override {
    attach_thread = std::this_thread::get_id();
    attached = true;
    return true;
  }
  bool Resolve(const CodeEvent& load, LoadNames* names) override {
    if (!attached) ++resolved_detached;
    if (std::this_thread::get_id() != attach_thread) ++resolved_elsewhere;
    name_ = "resolved@" + std::to_string(load.code_addr) + "/" + std::to_string(load.frames.size());
    *names = LoadNames();
    names->name = name_;
    names->perf_map_name = name_;
    ++resolved;
    return true;
  }
  void Detach() override {
    if (std::this_thread::get_id() != attach_thread) ++resolved_elsewhere;
    attached = false;
    ++detaches;
  }
  void Forget(MethodId method) override { forgotten.push_back(method); }
  // Names an intrinsic after its address once `reads_allowed` (a read fits the budget) or when forced.
  IntrinsicAnswer NameIntrinsic(uint64_t code_addr, uint64_t posted, bool force) override {
    if (!attached || std::this_thread::get_id() != attach_thread) ++resolved_elsewhere;
    if (!reads_allowed && !force) return {nullptr, true};
    if (read_throws) throw std::bad_alloc();
    forced_reads += force;
    intrinsic_.name = "intrinsic@" + std::to_string(code_addr) + "/" + std::to_string(posted);
    return {&intrinsic_, false};
  }
  bool reads_allowed = true;
  bool read_throws = false;  // as the real read does without memory for the list
  int forced_reads = 0;

  std::thread::id attach_thread;
  std::atomic<bool> attached{false};
  int resolved = 0, resolved_detached = 0, resolved_elsewhere = 0, detaches = 0;
  std::vector<MethodId> forgotten;

 private:
  std::string name_;
  IntrinsicName intrinsic_;
};

void PushDeferred(RecordQueue& queue, uint64_t ts, uint64_t addr, size_t frames) {
  std::vector<uint8_t> code(0x20, 0x90);
  std::vector<ScopeFrame> scope(frames, ScopeFrame{0, 1});
  const ScopePc pc{addr + 0x10, 0, static_cast<uint32_t>(frames)};
  CodeBlob blob;
  blob.timestamp = ts;
  blob.code_addr = addr;
  blob.code_size = code.size();
  blob.code = code.data();
  CodeEvent* load =
      NewDeferredLoad(queue, blob, 42, std::span<const ScopePc>(&pc, frames != 0 ? 1 : 0), scope, 0);
  ASSERT_NE(load, nullptr);
  ASSERT_TRUE(queue.Push(load));
}

// This thread stands in for the writer: asks for the attach and serves it.
void AttachHere(Lifecycle& lifecycle, const FakeResolver& resolver) {
  lifecycle.BeginDeferring();
  ASSERT_FALSE(lifecycle.Serve([] {}));
  ASSERT_TRUE(resolver.attached);
}

// The started writer thread attaches: asks for it and waits until it has.
void AwaitWriterAttach(Lifecycle& lifecycle, const FakeResolver& resolver) {
  lifecycle.BeginDeferring();
  for (int i = 0; i < 5000 && !resolver.attached; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(resolver.attached);
}

// A method-handle intrinsic as a callback queues it: a placeholder name for the writer to replace.
void PushIntrinsic(RecordQueue& queue, uint64_t ts, uint64_t addr) {
  static const std::string unknown = UnknownIntrinsicName(NameStyle::kJava).name;
  std::vector<uint8_t> code(0x20, 0x90);
  CodeBlob blob;
  blob.timestamp = ts;
  blob.code_addr = addr;
  blob.code_size = code.size();
  blob.code = code.data();
  LoadNames names;
  names.name = names.perf_map_name = unknown;
  names.intrinsic_placeholder = true;
  CodeEvent* load = NewNamedLoad(queue, EventKind::kCompiledLoad, blob, names);
  ASSERT_NE(load, nullptr);
  ASSERT_TRUE(queue.Push(load));
}

TEST_F(WriterTest, DeferredLoadsAreResolvedOnTheAttachedWriterThreadBeforeItDetaches) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  PushLoad(queue, 5000, 0x1000, 0x20, "before");  // resolved in its callback
  ASSERT_NO_FATAL_FAILURE(AwaitWriterAttach(lifecycle, resolver));
  PushDeferred(queue, 5001, 0x2000, 3);
  ASSERT_TRUE(queue.Push(NewUnload(queue, 5002, 0x2000, 77)));
  PushDeferred(queue, 5003, 0x2000, 0);  // reuses the address after the unload
  EXPECT_TRUE(lifecycle.StopDeferring(5000));
  EXPECT_FALSE(resolver.attached);
  EXPECT_EQ(resolver.resolved, 2);  // all queued before StopDeferring, resolved before it returned
  writer.Finish(9000, 5000);

  EXPECT_EQ(resolver.detaches, 1);
  EXPECT_EQ(resolver.resolved_detached, 0);
  EXPECT_EQ(resolver.resolved_elsewhere, 0);
  // The writer's own method cache follows the unloads too.
  EXPECT_EQ(resolver.forgotten, std::vector<MethodId>{77});
  EXPECT_EQ(LoadNamesIn(writer.dump_path()),
            (std::vector<std::string>{"before", "resolved@8192/3", "resolved@8192/0"}));
  EXPECT_EQ(stats.LostTotal(), 0u);
  EXPECT_EQ(stats.resolve_latency.count(), 2u);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

TEST_F(WriterTest, DeferredLoadsWithoutAResolverAreCountedLost) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  lifecycle.BeginDeferring();  // nothing to attach: a no-op
  PushDeferred(queue, 5001, 0x2000, 1);
  EXPECT_TRUE(lifecycle.StopDeferring(5000));
  writer.Finish(9000, 5000);
  EXPECT_EQ(stats.lost_unresolved.Get(), 1u);
  EXPECT_EQ(stats.LostTotal(), 1u);
  EXPECT_EQ(stats.code_loads_written.Get(), 0u);
}

// Resolving on the writer allocates nothing in the queue: the deferred load's bytes are all the
// budget ever holds for it, so resolving can never take the bytes in flight past budget=.
TEST_F(WriterTest, ResolvingADeferredLoadTakesNoBudget) {
  options_.budget_bytes = 64 << 10;
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  ASSERT_NO_FATAL_FAILURE(AttachHere(lifecycle, resolver));
  for (int i = 0; i < 8; ++i) PushDeferred(queue, 5000 + static_cast<uint64_t>(i), 0x10000 * (i + 1ull), 200);
  const uint64_t held = queue.bytes_in_flight();
  EXPECT_EQ(stats.queue_bytes_high.Get(), held);
  EXPECT_EQ(writer.ProcessAvailable(), 8u);
  EXPECT_EQ(resolver.resolved, 8);
  EXPECT_EQ(stats.code_loads_written.Get(), 8u);
  EXPECT_EQ(stats.queue_bytes_high.Get(), held);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
  lifecycle.DetachAtExit();
}

// A callback cannot read the JVM's code list, so a method-handle intrinsic it named (posted
// before the writer attached: JDK 25 makes some at start-up) says its signature is unknown. The
// attached writer names it; one it cannot name stays as the callback wrote it, counted.
TEST_F(WriterTest, IntrinsicsNamedInCallbacksAreNamedByTheAttachedWriter) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  const std::string unknown = UnknownIntrinsicName(NameStyle::kJava).name;
  PushIntrinsic(queue, 5000, 0x1000);
  EXPECT_EQ(writer.ProcessAvailable(), 1u);  // not attached: nobody can read the code list
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 1u);
  PushIntrinsic(queue, 5001, 0x2000);  // queued before the writer attached
  PushLoad(queue, 5002, 0x3000, 0x20, "app.Main.run()");
  ASSERT_NO_FATAL_FAILURE(AttachHere(lifecycle, resolver));
  EXPECT_EQ(writer.ProcessAvailable(), 2u);
  lifecycle.DetachAtExit();

  EXPECT_EQ(resolver.resolved_elsewhere, 0);
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 1u);
  EXPECT_EQ(stats.code_loads_written.Get(), 3u);
  EXPECT_EQ(LoadNamesIn(writer.dump_path()),
            (std::vector<std::string>{unknown, "intrinsic@8192/5001", "app.Main.run()"}));
}

// A code-list read the budget puts off (intrinsic_names.h): the intrinsic waits, and so does
// every intrinsic after it, while other loads are written; a later read names them all. One
// whose code is unloaded meanwhile is written (unnamed) before its unload.
TEST_F(WriterTest, IntrinsicsWaitForACodeListReadTheBudgetAllows) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  ASSERT_NO_FATAL_FAILURE(AttachHere(lifecycle, resolver));
  const uint64_t now = MonotonicNanos();
  resolver.reads_allowed = false;
  PushIntrinsic(queue, now, 0x1000);
  PushLoad(queue, now + 1, 0x2000, 0x20, "app.Main.run()");
  PushIntrinsic(queue, now + 2, 0x3000);
  EXPECT_EQ(writer.ProcessAvailable(), 3u);
  EXPECT_EQ(LoadNamesIn(writer.dump_path()), std::vector<std::string>{"app.Main.run()"});
  EXPECT_EQ(stats.intrinsics_waited.Get(), 2u);
  PushUnload(queue, now + 3, 0x3000);
  EXPECT_EQ(writer.ProcessAvailable(), 1u);
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 1u);
  resolver.reads_allowed = true;
  EXPECT_EQ(writer.ProcessAvailable(), 0u);  // nothing queued: the waiting one is named
  lifecycle.DetachAtExit();

  const std::string unknown = UnknownIntrinsicName(NameStyle::kJava).name;
  EXPECT_EQ(LoadNamesIn(writer.dump_path()),
            (std::vector<std::string>{"app.Main.run()", unknown, "intrinsic@4096/" + std::to_string(now)}));
  EXPECT_EQ(resolver.forced_reads, 0);
  EXPECT_EQ(stats.code_loads_written.Get(), 3u);
  EXPECT_EQ(stats.Unaccounted(), 0u);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

// An intrinsic still waiting when the writer detaches (VM death) is named by one read past the
// budget (IntrinsicNamer::kForcedReadMaxNs).
TEST_F(WriterTest, IntrinsicsStillWaitingWhenTheWriterDetachesForceARead) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  resolver.reads_allowed = false;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  writer.Start();
  ASSERT_NO_FATAL_FAILURE(AwaitWriterAttach(lifecycle, resolver));
  const uint64_t now = MonotonicNanos();
  PushIntrinsic(queue, now, 0x1000);
  PushIntrinsic(queue, now + 1, 0x2000);
  EXPECT_TRUE(lifecycle.StopDeferring(5000));
  writer.Finish(now + 2, 5000);

  EXPECT_EQ(resolver.forced_reads, 2);  // the fake reads per load; the real namer once for all
  EXPECT_EQ(resolver.resolved_elsewhere, 0);
  EXPECT_EQ(LoadNamesIn(writer.dump_path()),
            (std::vector<std::string>{"intrinsic@4096/" + std::to_string(now),
                                      "intrinsic@8192/" + std::to_string(now + 1)}));
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 0u);
  EXPECT_EQ(stats.Unaccounted(), 0u);
}

// A read that fails for want of memory leaves nothing waiting and loses nothing: the loads are
// written with the placeholder, counted unnamed.
TEST_F(WriterTest, AFailingReadWritesTheWaitingIntrinsicsUnnamed) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  resolver.reads_allowed = false;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  ASSERT_NO_FATAL_FAILURE(AttachHere(lifecycle, resolver));
  const uint64_t now = MonotonicNanos();
  PushIntrinsic(queue, now, 0x1000);
  PushIntrinsic(queue, now + 1, 0x2000);
  EXPECT_EQ(writer.ProcessAvailable(), 2u);
  resolver.reads_allowed = true;
  resolver.read_throws = true;
  EXPECT_EQ(writer.ProcessAvailable(), 0u);
  lifecycle.DetachAtExit();
  const std::string unknown = UnknownIntrinsicName(NameStyle::kJava).name;
  EXPECT_EQ(LoadNamesIn(writer.dump_path()), (std::vector<std::string>{unknown, unknown}));
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 2u);
  EXPECT_EQ(stats.LostTotal(), 0u);
  EXPECT_EQ(stats.Unaccounted(), 0u);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

// Memory stays bounded: with IntrinsicStage::kMaxHeld waiting, the oldest is written unnamed.
TEST_F(WriterTest, AtMostKMaxHeldIntrinsicsWait) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  FakeResolver resolver;
  resolver.reads_allowed = false;
  lifecycle.SetResolver(&resolver);
  ASSERT_TRUE(writer.Open(1, 1000));
  ASSERT_NO_FATAL_FAILURE(AttachHere(lifecycle, resolver));
  const uint64_t now = MonotonicNanos();
  const size_t held = IntrinsicStage::kMaxHeld;
  for (size_t i = 0; i <= held; ++i) {
    PushIntrinsic(queue, now + i, 0x1000 * (i + 1));
    EXPECT_EQ(writer.ProcessAvailable(), 1u);
  }
  EXPECT_EQ(LoadNamesIn(writer.dump_path()), std::vector<std::string>{UnknownIntrinsicName(NameStyle::kJava).name});
  EXPECT_EQ(stats.intrinsics_unnamed.Get(), 1u);
  resolver.reads_allowed = true;
  EXPECT_EQ(writer.ProcessAvailable(), 0u);
  lifecycle.DetachAtExit();
  EXPECT_EQ(stats.code_loads_written.Get(), held + 1);
  EXPECT_EQ(LoadNamesIn(writer.dump_path())[1], "intrinsic@8192/" + std::to_string(now + 1));
  EXPECT_EQ(stats.Unaccounted(), 0u);
}

// Records that reach a writer whose dump is not open (never created, or already closed) are
// lost for want of output, and counted so.
TEST_F(WriterTest, RecordsWithoutADumpAreCountedAsNoOutput) {
  Pipeline pipeline(options_);
  auto& [stats, queue, lifecycle, writer] = pipeline;
  PushLoad(queue, 5000, 0x1000, 0x20, "nowhere");
  EXPECT_EQ(writer.ProcessAvailable(), 1u);
  EXPECT_EQ(stats.lost_no_output.Get(), 1u);
  EXPECT_EQ(stats.LostTotal(), 1u);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

}  // namespace
}  // namespace jitdump_agent
