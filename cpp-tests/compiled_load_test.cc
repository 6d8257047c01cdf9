// A CompiledMethodLoad event as HotSpot delivers it (compile_info with PcDesc scope chains),
// through the fake jvmtiEnv, into encoded records.
#include "agent/compiled_load.h"

#include "agent/deferred_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <jvmticmlr.h>

#include <memory>
#include <vector>

#include "fake_jvmti.h"
#include "test_dump_reader.h"

namespace jitdump_agent {
namespace {

using test_support::FakeClass;
using test_support::FakeJvmti;
using test_support::FakeMethod;

class CompiledLoadTest : public ::testing::Test {
 protected:
  // Payload bytes after a fake file header, so the test walker can read them.
  std::vector<test_support::TestRecord> Records(const Batch* batch) {
    std::vector<uint8_t> bytes(40 + batch->payload_size, 0);
    bytes[8] = 40;
    std::copy_n(batch->payload(), batch->payload_size, bytes.begin() + 40);
    return test_support::WalkRecords(bytes);
  }

  // The event as the callback builds it: scope chains copied out of compile_info.
  CompiledLoadEvent Event(jmethodID method, const void* code, uint64_t code_size, const void* compile_info) {
    pcs_.clear();
    frames_.clear();
    CollectScopes(compile_info, pcs_, frames_);
    CompiledLoadEvent event;
    event.method = method;
    event.code_addr = reinterpret_cast<uintptr_t>(code);
    event.code_size = code_size;
    event.code = options_.code ? code : nullptr;
    event.pcs = pcs_;
    event.frames = frames_;
    return event;
  }

  // HotSpot's compile_info for three PcDescs (pcs point into it): caller at bci 0; callee at
  // bci 3 inlined at caller bci 4; caller at bci 9.
  struct InlineCompileInfo {
    jmethodID m0[1], m1[2], m2[1];
    jint b0[1] = {0}, b1[2] = {3, 4}, b2[1] = {9};
    PCStackInfo pcs[3];
    jvmtiCompiledMethodLoadInlineRecord record{};
    InlineCompileInfo(uint64_t base, jmethodID caller, jmethodID callee)
        : m0{caller}, m1{callee, caller}, m2{caller},
          pcs{{reinterpret_cast<void*>(base + 0x10), 1, m0, b0},
              {reinterpret_cast<void*>(base + 0x30), 2, m1, b1},
              {reinterpret_cast<void*>(base + 0x50), 1, m2, b2}} {
      record.header.kind = JVMTI_CMLR_INLINE_INFO;
      record.header.majorinfoversion = JVMTI_CMLR_MAJOR_VERSION;
      record.numpcs = 3;
      record.pcinfo = pcs;
    }
    InlineCompileInfo(const InlineCompileInfo&) = delete;
  };

  std::vector<ScopePc> pcs_;
  std::vector<ScopeFrame> frames_;
  FakeJvmti fake_;
  Stats stats_;
  Options options_;
  FakeClass caller_class_{"Lapp/Caller;", "Caller.java"};
  FakeClass callee_class_{"Lapp/util/Callee;", "Callee.java"};
  FakeMethod caller_{&caller_class_, "run", "([Ljava/lang/String;)V", {{0, 10}, {4, 11}, {9, 12}}};
  FakeMethod callee_{&callee_class_, "work", "(I)I", {{0, 40}, {3, 41}}};
  uint8_t code_[0x100] = {};
};

TEST_F(CompiledLoadTest, RowsFollowPcDescEndSemanticsAndInlinedFramesCarryTheirOwnLines) {
  const uint64_t base = reinterpret_cast<uintptr_t>(code_);
  const InlineCompileInfo info(base, caller_.id(), callee_.id());

  RecordQueue queue(options_, stats_);
  MethodCache cache(fake_.env(), options_.names, true, 64, stats_);
  const CompiledLoadContext context{cache, queue, stats_, options_, true, 1234};
  CompiledLoadEvent event = Event(caller_.id(), code_, sizeof code_, &info.record);
  event.timestamp = 99;
  event.tid = 7;
  code_[0] = 0x55;
  Batch* batch = BuildCompiledLoad(context, event);
  ASSERT_NE(batch, nullptr);
  const auto records = Records(batch);
  ASSERT_EQ(records.size(), 2u);
  const auto& debug = records[0];
  ASSERT_EQ(debug.id, 2u);
  EXPECT_EQ(debug.code_addr, base);
  ASSERT_EQ(debug.entries.size(), 4u);
  EXPECT_EQ(debug.entries[0].addr, base);         // [start, 0x10): caller line 10
  EXPECT_EQ(debug.entries[0].line, 10);
  EXPECT_EQ(debug.entries[1].addr, base + 0x10);  // [0x10, 0x30): callee line 41
  EXPECT_EQ(debug.entries[1].file, "app/util/Callee.java");
  EXPECT_EQ(debug.entries[1].line, 41);
  EXPECT_EQ(debug.entries[2].addr, base + 0x30);  // [0x30, 0x50): caller line 12
  EXPECT_EQ(debug.entries[2].line, 12);
  EXPECT_EQ(debug.entries[3].addr, base + 0x50);  // closing row: line 12 ends at the last PcDesc
  EXPECT_EQ(debug.entries[3].line, 12);
  const auto& load = records[1];
  EXPECT_EQ(load.id, 0u);
  EXPECT_EQ(load.name, "app.Caller.run(java.lang.String[])");
  EXPECT_EQ(load.code_size, sizeof code_);
  EXPECT_EQ(load.code[0], 0x55);  // copied inside the callback
  queue.Free(batch);
}

TEST_F(CompiledLoadTest, NativeWrapperWithoutPcDescsGetsNoDebugInfo) {
  caller_.native = true;
  jvmtiCompiledMethodLoadInlineRecord record{};
  record.header.kind = JVMTI_CMLR_INLINE_INFO;
  record.numpcs = 0;
  RecordQueue queue(options_, stats_);
  MethodCache cache(fake_.env(), options_.names, true, 64, stats_);
  const CompiledLoadContext context{cache, queue, stats_, options_, true, 1};
  const CompiledLoadEvent event = Event(caller_.id(), code_, 16, &record);
  Batch* batch = BuildCompiledLoad(context, event);
  ASSERT_NE(batch, nullptr);
  const auto records = Records(batch);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].id, 0u);
  EXPECT_FALSE(batch->has_debug_info);
  queue.Free(batch);
}

TEST_F(CompiledLoadTest, CodeOffWritesZerosOfTheRightSize) {
  options_.code = false;
  RecordQueue queue(options_, stats_);
  MethodCache cache(fake_.env(), options_.names, false, 64, stats_);
  const CompiledLoadContext context{cache, queue, stats_, options_, false, 1};
  code_[0] = 0x55;
  const CompiledLoadEvent event = Event(caller_.id(), code_, 32, nullptr);
  Batch* batch = BuildCompiledLoad(context, event);
  ASSERT_NE(batch, nullptr);
  const auto records = Records(batch);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].code, std::vector<uint8_t>(32, 0));
  queue.Free(batch);
}

// The writer-thread path: the callback copies the event into a deferred batch (and the code
// bytes with it), the JVM's memory changes, and resolving the copy later gives the very records
// resolving in the callback would have given.
TEST_F(CompiledLoadTest, DeferredLoadResolvesLaterToTheSameRecords) {
  const uint64_t base = reinterpret_cast<uintptr_t>(code_);
  auto info = std::make_unique<InlineCompileInfo>(base, caller_.id(), callee_.id());
  options_.inline_info = true;
  RecordQueue queue(options_, stats_);
  MethodCache direct_cache(fake_.env(), options_.names, true, 64, stats_);
  MethodCache writer_cache(fake_.env(), options_.names, true, 64, stats_);
  const CompiledLoadContext direct{direct_cache, queue, stats_, options_, true, 1234};
  const CompiledLoadContext writer{writer_cache, queue, stats_, options_, true, 1234};
  code_[0] = 0x55;
  code_[0xff] = 0x66;
  CompiledLoadEvent event = Event(caller_.id(), code_, sizeof code_, &info->record);
  event.timestamp = 99;
  event.tid = 7;
  event.replayed = true;
  Batch* expected = BuildCompiledLoad(direct, event);
  Batch* deferred = BuildDeferredLoad(queue, event);
  ASSERT_NE(expected, nullptr);
  ASSERT_NE(deferred, nullptr);
  EXPECT_EQ(deferred->kind, BatchKind::kDeferredLoad);

  // What was valid only during the callback is gone or reused now.
  info.reset();
  pcs_.assign(pcs_.size(), ScopePc{1, 0, 0});
  frames_.assign(frames_.size(), ScopeFrame{nullptr, -1});
  const std::vector<uint8_t> original_code(code_, code_ + sizeof code_);
  std::fill(std::begin(code_), std::end(code_), 0xcc);

  Batch* resolved = BuildCompiledLoad(writer, ReadDeferredLoad(*deferred), deferred);
  ASSERT_NE(resolved, nullptr);
  EXPECT_EQ(resolved->kind, BatchKind::kLoad);
  EXPECT_TRUE(resolved->replayed);
  EXPECT_TRUE(resolved->has_inline_info);
  EXPECT_EQ(resolved->timestamp, 99u);
  ASSERT_EQ(resolved->payload_size, expected->payload_size);
  EXPECT_TRUE(std::equal(resolved->payload(), resolved->payload() + resolved->payload_size, expected->payload()));
  const auto records = Records(resolved);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].code, original_code);
  for (Batch* batch : {expected, deferred, resolved}) queue.Free(batch);
  EXPECT_EQ(queue.bytes_in_flight(), 0u);
}

TEST_F(CompiledLoadTest, DeferredLoadWithCodeOffCarriesNoCodeBytes) {
  options_.code = false;
  RecordQueue queue(options_, stats_);
  const CompiledLoadEvent event = Event(caller_.id(), code_, sizeof code_, nullptr);
  Batch* deferred = BuildDeferredLoad(queue, event);
  ASSERT_NE(deferred, nullptr);
  EXPECT_LT(deferred->payload_size, 64u);  // a header, no scopes, no code
  const CompiledLoadEvent read = ReadDeferredLoad(*deferred);
  EXPECT_EQ(read.code, nullptr);
  EXPECT_EQ(read.code_size, sizeof code_);
  EXPECT_EQ(read.method, caller_.id());
  EXPECT_TRUE(read.pcs.empty());
  queue.Free(deferred);
}

}  // namespace
}  // namespace jitdump_agent
