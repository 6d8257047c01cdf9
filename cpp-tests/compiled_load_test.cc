// A CompiledMethodLoad event as HotSpot delivers it (compile_info with PcDesc scope chains),
// through the agent's callback and the fake JVM, into the code event it queues, and from there
// into the records the writer encodes.
#include "agent/jvmti/callbacks.h"

#include <gtest/gtest.h>
#include <jvmti.h>
#include <jvmticmlr.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "agent/core/dump_batch.h"
#include "agent/jvmti/jvm_resolver.h"
#include "fake_jvmti.h"
#include "test_dump_reader.h"

namespace jitdump_agent {
namespace {

using test_support::FakeClass;
using test_support::FakeJvm;
using test_support::FakeJvmti;
using test_support::FakeMethod;

// The bytes the writer appends for one load (timestamp as the callback took it, code_index 1),
// after a fake file header, so the test walker can read them.
std::vector<uint8_t> Encoded(const CodeEvent& load, const LoadNames& names) {
  DumpBatch batch;
  EXPECT_TRUE(batch.Add(load, names, 1234, load.timestamp, 1));
  std::vector<uint8_t> bytes(40, 0);
  bytes[8] = 40;
  for (const struct iovec& iov : batch.Iovecs()) {
    const auto* base = static_cast<const uint8_t*>(iov.iov_base);
    bytes.insert(bytes.end(), base, base + iov.iov_len);
  }
  return bytes;
}

std::vector<test_support::TestRecord> Records(const CodeEvent& load, const LoadNames& names) {
  return test_support::WalkRecords(Encoded(load, names));
}

class CompiledLoadTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeJvm::ActAsJvmThread(); }  // callbacks run on the JVM's threads

  // The agent's state as Agent_OnLoad sets it up, without files. With `defer`, the writer's
  // resolver is attached (by this thread, standing in for the writer) and loads are deferred.
  Session& State(bool defer) {
    state_.reset();  // before its lifecycle
    lifecycle_ = std::make_unique<Lifecycle>();
    state_ = std::make_unique<Session>(options_, *lifecycle_);
    state_->jvmti = fake_.env();
    state_->vm = jvm_.vm();
    state_->pid = 1234;
    state_->naming = std::make_unique<JvmtiLoadNaming>(fake_.env(), state_->options, true, options_.lines,
                                                       state_->stats);
    (void)lifecycle_->Start(state_.get());
    if (defer) {
      state_->resolver = std::make_unique<JvmResolver>(jvm_.vm(), fake_.env(), state_->options, true, options_.lines,
                                                       state_->stats);
      state_->lifecycle.SetResolver(state_->resolver.get());
      state_->lifecycle.BeginDeferring();
      state_->lifecycle.Serve([] {});
    }
    return *state_;
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

  FakeJvmti fake_;
  FakeJvm jvm_;
  Options options_;
  std::unique_ptr<Lifecycle> lifecycle_;
  std::unique_ptr<Session> state_;
  FakeClass caller_class_{"Lapp/Caller;", "Caller.java"};
  FakeClass callee_class_{"Lapp/util/Callee;", "Callee.java"};
  FakeMethod caller_{&caller_class_, "run", "([Ljava/lang/String;)V", {{0, 10}, {4, 11}, {9, 12}}};
  FakeMethod callee_{&callee_class_, "work", "(I)I", {{0, 40}, {3, 41}}};
  uint8_t code_[0x100] = {};
};

TEST_F(CompiledLoadTest, RowsFollowPcDescEndSemanticsAndInlinedFramesCarryTheirOwnLines) {
  const uint64_t base = reinterpret_cast<uintptr_t>(code_);
  const InlineCompileInfo info(base, caller_.id(), callee_.id());
  Session& s = State(/*defer=*/false);
  code_[0] = 0x55;
  HandleCompiledMethodLoad(s.lifecycle, 99, caller_.id(), sizeof code_, code_, &info.record);
  CodeEvent* load = s.queue.Pop();
  ASSERT_NE(load, nullptr);
  EXPECT_TRUE(load->resolved);
  code_[0] = 0xcc;  // the JVM's memory changes after the callback
  const auto records = Records(*load, load->names);
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
  const auto& code_load = records[1];
  EXPECT_EQ(code_load.id, 0u);
  EXPECT_EQ(code_load.timestamp, 99u);
  EXPECT_EQ(code_load.name, "app.Caller.run(java.lang.String[])");
  EXPECT_EQ(code_load.code_size, sizeof code_);
  EXPECT_EQ(code_load.code[0], 0x55);  // copied inside the callback
  s.queue.Free(load);
  EXPECT_EQ(s.queue.bytes_in_flight(), 0u);
}

// JVMTI hands every method-handle intrinsic the same jmethodID, which names the first intrinsic
// HotSpot made (here linkToStatic(int, int, MemberName)). A callback cannot read the JVM's code
// list (that needs the attached writer thread), so it says what it does not know and leaves the
// load for the writer to name (writer_test: IntrinsicsNamedInCallbacks...).
TEST_F(CompiledLoadTest, AnIntrinsicNamedInACallbackSaysItsSignatureIsUnknown) {
  FakeClass method_handle{"Ljava/lang/invoke/MethodHandle;", ""};
  FakeMethod link_to_static{&method_handle, "linkToStatic", "(IILjava/lang/invoke/MemberName;)I", {}};
  link_to_static.native = true;
  FakeMethod invoke_exact_lf{&method_handle, "asType",
                             "(Ljava/lang/invoke/MethodType;)Ljava/lang/invoke/MethodHandle;", {{0, 700}}};
  jvmtiCompiledMethodLoadInlineRecord record{};
  record.header.kind = JVMTI_CMLR_INLINE_INFO;
  record.numpcs = 0;
  Session& s = State(/*defer=*/false);
  HandleCompiledMethodLoad(s.lifecycle, 5, link_to_static.id(), 32, code_, &record);
  HandleCompiledMethodLoad(s.lifecycle, 6, invoke_exact_lf.id(), 64, code_ + 64, &record);
  CodeEvent* intrinsic = s.queue.Pop();
  CodeEvent* java = s.queue.Pop();
  ASSERT_NE(intrinsic, nullptr);
  ASSERT_NE(java, nullptr);
  EXPECT_EQ(intrinsic->names.name, "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
  EXPECT_EQ(java->names.name, "java.lang.invoke.MethodHandle.asType(java.lang.invoke.MethodType)")
      << "a Java method of MethodHandle keeps its own name";
  EXPECT_TRUE(intrinsic->names.intrinsic_placeholder) << "for the writer to settle";
  EXPECT_FALSE(java->names.intrinsic_placeholder);
  EXPECT_EQ(s.stats.intrinsics_unnamed.Get(), 0u) << "counted where it is settled: the writer";
  EXPECT_EQ(s.stats.intrinsics_named.Get(), 0u);
  s.queue.Free(intrinsic);
  s.queue.Free(java);
}

TEST_F(CompiledLoadTest, NativeWrapperWithoutPcDescsGetsNoDebugInfo) {
  caller_.native = true;
  jvmtiCompiledMethodLoadInlineRecord record{};
  record.header.kind = JVMTI_CMLR_INLINE_INFO;
  record.numpcs = 0;
  Session& s = State(/*defer=*/false);
  HandleCompiledMethodLoad(s.lifecycle, 1, caller_.id(), 16, code_, &record);
  CodeEvent* load = s.queue.Pop();
  ASSERT_NE(load, nullptr);
  const auto records = Records(*load, load->names);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].id, 0u);
  EXPECT_TRUE(load->names.lines.empty());
  s.queue.Free(load);
}

TEST_F(CompiledLoadTest, CodeOffWritesZerosOfTheRightSize) {
  options_.code = false;
  options_.lines = false;
  Session& s = State(/*defer=*/false);
  code_[0] = 0x55;
  HandleCompiledMethodLoad(s.lifecycle, 1, caller_.id(), 32, code_, nullptr);
  CodeEvent* load = s.queue.Pop();
  ASSERT_NE(load, nullptr);
  const auto records = Records(*load, load->names);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].code, std::vector<uint8_t>(32, 0));
  s.queue.Free(load);
}

// The writer-thread path: the callback copies the event into a deferred load (and the code
// bytes with it) and pins the method's class, the JVM's memory changes, and the writer's
// resolver later gives the very records resolving in the callback would have given, and drops
// the pin.
TEST_F(CompiledLoadTest, DeferredLoadResolvesLaterToTheSameRecords) {
  const uint64_t base = reinterpret_cast<uintptr_t>(code_);
  auto info = std::make_unique<InlineCompileInfo>(base, caller_.id(), callee_.id());
  options_.inline_info = true;
  code_[0] = 0x55;
  code_[0xff] = 0x66;
  Session& direct = State(/*defer=*/false);
  HandleCompiledMethodLoad(direct.lifecycle, 99, caller_.id(), sizeof code_, code_, &info->record);
  CodeEvent* resolved_in_callback = direct.queue.Pop();
  ASSERT_NE(resolved_in_callback, nullptr);
  const std::vector<uint8_t> expected = Encoded(*resolved_in_callback, resolved_in_callback->names);
  direct.queue.Free(resolved_in_callback);

  Session& s = State(/*defer=*/true);
  HandleCompiledMethodLoad(s.lifecycle, 99, caller_.id(), sizeof code_, code_, &info->record);
  CodeEvent* deferred = s.queue.Pop();
  ASSERT_NE(deferred, nullptr);
  EXPECT_FALSE(deferred->resolved);
  EXPECT_EQ(s.stats.deferred_loads.Get(), 1u);
  EXPECT_NE(deferred->pin, 0u);
  EXPECT_EQ(FakeJvm::live_global_refs(), 1);

  // What was valid only during the callback is gone or reused now.
  info.reset();
  const std::vector<uint8_t> original_code(code_, code_ + sizeof code_);
  std::fill(std::begin(code_), std::end(code_), 0xcc);

  LoadNames names;
  ASSERT_TRUE(s.resolver->Resolve(*deferred, &names));
  EXPECT_EQ(FakeJvm::live_global_refs(), 0) << "the pin is dropped once resolved";
  EXPECT_NE(names.inline_info, nullptr);
  EXPECT_EQ(deferred->timestamp, 99u);
  const std::vector<uint8_t> bytes = Encoded(*deferred, names);
  EXPECT_EQ(bytes, expected);
  const auto records = test_support::WalkRecords(bytes);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].code, original_code);
  s.queue.Free(deferred);
  EXPECT_EQ(s.queue.bytes_in_flight(), 0u);
}

TEST_F(CompiledLoadTest, DeferredLoadWithCodeOffCarriesNoCodeBytes) {
  Stats stats;
  RecordQueue queue(options_, stats);
  CodeBlob blob;
  blob.code_addr = reinterpret_cast<uintptr_t>(code_);
  blob.code_size = sizeof code_;
  blob.code = nullptr;  // code=off
  blob.replayed = true;
  CodeEvent* deferred = NewDeferredLoad(queue, blob, caller_.mid(), {}, {}, 0);
  ASSERT_NE(deferred, nullptr);
  EXPECT_EQ(deferred->accounted, EventBlocks::BlockSize(sizeof(CodeEvent)));  // a header's block
  EXPECT_EQ(deferred->code, nullptr);
  EXPECT_EQ(deferred->code_size, sizeof code_);
  EXPECT_EQ(deferred->method, caller_.mid());
  EXPECT_TRUE(deferred->replayed);
  EXPECT_TRUE(deferred->pcs.empty());
  queue.Free(deferred);
}

}  // namespace
}  // namespace jitdump_agent
