// A CompiledMethodLoad event as HotSpot delivers it (compile_info with PcDesc scope chains),
// through the fake jvmtiEnv, into encoded records.
#include "agent/compiled_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <jvmticmlr.h>

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
  jmethodID caller = caller_.id(), callee = callee_.id();
  const uint64_t base = reinterpret_cast<uintptr_t>(code_);
  // PcDesc 0: caller at bci 0; PcDesc 1: callee (bci 3) inlined at caller bci 4; PcDesc 2: caller bci 9.
  jmethodID m0[] = {caller};
  jint b0[] = {0};
  jmethodID m1[] = {callee, caller};
  jint b1[] = {3, 4};
  jmethodID m2[] = {caller};
  jint b2[] = {9};
  PCStackInfo pcs[] = {{reinterpret_cast<void*>(base + 0x10), 1, m0, b0},
                       {reinterpret_cast<void*>(base + 0x30), 2, m1, b1},
                       {reinterpret_cast<void*>(base + 0x50), 1, m2, b2}};
  jvmtiCompiledMethodLoadInlineRecord record{};
  record.header.kind = JVMTI_CMLR_INLINE_INFO;
  record.header.majorinfoversion = JVMTI_CMLR_MAJOR_VERSION;
  record.numpcs = 3;
  record.pcinfo = pcs;

  RecordQueue queue(options_, stats_);
  MethodCache cache(fake_.env(), options_.names, true, 64, stats_);
  const CompiledLoadContext context{cache, queue, stats_, options_, true, 1234};
  CompiledLoadEvent event;
  event.timestamp = 99;
  event.tid = 7;
  event.method = caller;
  event.code_size = sizeof code_;
  event.code_addr = code_;
  event.compile_info = &record;
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
  CompiledLoadEvent event;
  event.method = caller_.id();
  event.code_size = 16;
  event.code_addr = code_;
  event.compile_info = &record;
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
  CompiledLoadEvent event;
  event.method = caller_.id();
  event.code_size = 32;
  code_[0] = 0x55;
  event.code_addr = code_;
  Batch* batch = BuildCompiledLoad(context, event);
  ASSERT_NE(batch, nullptr);
  const auto records = Records(batch);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].code, std::vector<uint8_t>(32, 0));
  queue.Free(batch);
}

}  // namespace
}  // namespace jitdump_agent
