// The hand-off between the callbacks and the writer thread: first on its own (a recording
// resolver), then end to end through the agent's callbacks, the writer thread and its JVMTI
// resolver against the fake JVM, which answers JVMTI only on attached threads.
#include "agent/core/lifecycle.h"

#include <gtest/gtest.h>
#include <jvmti.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/jvmti/callbacks.h"
#include "agent/core/clock.h"
#include "agent/jvmti/jvm_resolver.h"
#include "fake_jvm_test.h"
#include "fake_jvmti.h"
#include "test_dump_reader.h"

namespace jitdump_agent {
namespace {

using test_support::FakeJvm;
using test_support::FakeJvmti;
using test_support::FakeMethod;

// A callback on its own thread that holds its ticket until told to go on.
class Callback {
 public:
  Callback(Lifecycle& lifecycle, bool compiled_load)
      : thread_([this, &lifecycle, compiled_load] {
          const Lifecycle::Ticket ticket = lifecycle.Enter(compiled_load);
          accepted_ = ticket.accepted();
          defer_ = ticket.defer();
          entered_ = true;
          while (!release_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }) {
    while (!entered_) std::this_thread::yield();
  }
  ~Callback() { Release(); }
  void Release() {
    release_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool accepted() const { return accepted_; }
  bool defer() const { return defer_; }

 private:
  std::atomic<bool> entered_{false}, release_{false}, accepted_{false}, defer_{false};
  std::thread thread_;
};

// Records what the hand-off asks of its resolver, in order.
class RecordingResolver final : public LoadResolver {
 public:
  bool Attach() override {
    log.push_back("attach");
    return attach_succeeds;
  }
  void Detach() override { log.push_back("detach"); }
  bool Resolve(const CodeEvent&, LoadNames*) override { return false; }
  void Forget(MethodId) override {}

  bool attach_succeeds = true;
  std::vector<std::string> log;
};

TEST(LifecycleTest, LoadsAreDeferredOnlyWhileTheWriterIsAttached) {
  RecordingResolver resolver;
  Lifecycle lifecycle;
  ASSERT_TRUE(lifecycle.Start(nullptr));
  lifecycle.SetResolver(&resolver);
  EXPECT_FALSE(lifecycle.Enter(true).defer()) << "before the writer attaches, callbacks resolve";
  lifecycle.BeginDeferring();
  EXPECT_TRUE(lifecycle.HasRequest());
  EXPECT_FALSE(lifecycle.Enter(true).defer()) << "asked, but not attached yet";
  EXPECT_FALSE(lifecycle.Serve([] {}));
  EXPECT_TRUE(lifecycle.attached());
  EXPECT_TRUE(lifecycle.Enter(true).defer());
  EXPECT_FALSE(lifecycle.Enter(false).defer()) << "stubs and unloads are never deferred";
  EXPECT_TRUE(lifecycle.StopDeferring(0) == false) << "deferring: it waits for the writer, which is this thread";
  EXPECT_FALSE(lifecycle.Enter(true).defer()) << "stopped: callbacks resolve again";
  int drains = 0;
  EXPECT_FALSE(lifecycle.Serve([&] { ++drains; }));
  EXPECT_EQ(drains, 1);
  EXPECT_EQ(resolver.log, (std::vector<std::string>{"attach", "detach"}));
  EXPECT_TRUE(lifecycle.StopDeferring(0)) << "the writer has detached";
  EXPECT_EQ(lifecycle.in_flight(), 0);
}

TEST(LifecycleTest, WithoutAResolverOrAnAttachNothingIsDeferred) {
  Lifecycle none;
  ASSERT_TRUE(none.Start(nullptr));
  none.BeginDeferring();
  EXPECT_FALSE(none.HasRequest());
  EXPECT_FALSE(none.Enter(true).defer());
  EXPECT_TRUE(none.StopDeferring(0));

  RecordingResolver resolver;
  resolver.attach_succeeds = false;
  Lifecycle refused;
  ASSERT_TRUE(refused.Start(nullptr));
  refused.SetResolver(&resolver);
  refused.BeginDeferring();
  EXPECT_FALSE(refused.Serve([] {}));
  EXPECT_FALSE(refused.attached());
  EXPECT_FALSE(refused.Enter(true).defer());
  EXPECT_TRUE(refused.StopDeferring(0)) << "nothing was ever deferred";
}

// The defect this class exists for: VM death used to give a late callback 100 ms, then detach
// the writer, leaving the late load to a thread JVMTI no longer answers.
TEST(LifecycleTest, TheWriterStaysAttachedUntilTheLastDeferringCallbackHasQueued) {
  RecordingResolver resolver;
  Lifecycle lifecycle;
  ASSERT_TRUE(lifecycle.Start(nullptr));
  lifecycle.SetResolver(&resolver);
  lifecycle.BeginDeferring();
  ASSERT_FALSE(lifecycle.Serve([] {}));
  Callback late(lifecycle, /*compiled_load=*/true);
  ASSERT_TRUE(late.defer());
  EXPECT_FALSE(lifecycle.StopDeferring(0));
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(lifecycle.Serve([&] { resolver.log.push_back("drain"); })) << "still waiting for the late callback";
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  EXPECT_TRUE(lifecycle.attached());
  late.Release();  // it has queued its load
  EXPECT_FALSE(lifecycle.Serve([&] { resolver.log.push_back("drain"); }));
  EXPECT_EQ(resolver.log, (std::vector<std::string>{"attach", "drain", "detach"}));
  EXPECT_FALSE(lifecycle.attached());
}

TEST(LifecycleTest, CloseRefusesEventsAndAwaitIdleWaitsForThoseInFlight) {
  Lifecycle lifecycle;
  ASSERT_TRUE(lifecycle.Start(nullptr));
  Callback inside(lifecycle, /*compiled_load=*/false);
  EXPECT_TRUE(inside.accepted());
  EXPECT_TRUE(lifecycle.Close());
  EXPECT_FALSE(lifecycle.Close()) << "only the first caller closes";
  EXPECT_FALSE(lifecycle.Enter(true).accepted());
  EXPECT_FALSE(lifecycle.AwaitIdle(20));
  std::thread leave([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    inside.Release();
  });
  EXPECT_TRUE(lifecycle.AwaitIdle(5000));
  leave.join();
  EXPECT_EQ(lifecycle.in_flight(), 0);
}

// End to end: the agent's state as Agent_OnLoad builds it (resolve=writer), with the writer
// thread running, the fake JVM refusing JVMTI to threads it does not know.
class LifecycleJvmTest : public test_support::FakeJvmTest {
 protected:
  void SetUp() override {
    FakeJvmTest::SetUp();
    options_.dir = dir_;
    options_.flush_ms = 1;
    state_ = std::make_unique<Session>(options_, lifecycle_);
    state_->jvmti = fake_.env();
    state_->vm = jvm_.vm();
    state_->pid = 4321;
    state_->naming = std::make_unique<JvmtiLoadNaming>(fake_.env(), state_->options, true, true, state_->stats);
    state_->resolver =
        std::make_unique<JvmResolver>(jvm_.vm(), fake_.env(), state_->options, true, true, state_->stats);
    lifecycle_.SetResolver(state_->resolver.get());
    ASSERT_TRUE(state_->writer.Open(state_->pid, 1000));
    state_->writer.Start();
    ASSERT_TRUE(lifecycle_.Start(state_.get()));
  }
  void TearDown() override {
    state_->lifecycle.Close();
    state_->writer.Finish(MonotonicNanos(), 5000);
    FakeJvmTest::TearDown();
  }

  // A compiled load of `method` whose one PcDesc names it, at `code_addr` as far as the agent
  // knows (the bytes come from `code`).
  void Load(FakeMethod& method, uint64_t code_addr, const uint8_t* code = nullptr) {
    PostCompiledLoad(lifecycle_, method, code != nullptr ? code : code_, sizeof code_,
                     reinterpret_cast<void*>(code_addr + 0x10));
  }

  std::vector<std::string> WrittenNames() { return LoadNames(state_->writer.dump_path()); }

  Options options_;
  Lifecycle lifecycle_;
  std::unique_ptr<Session> state_;
  FakeMethod early_{&class_, "early", "()V", {{0, 10}}};
  FakeMethod deferred_{&class_, "deferred", "()V", {{0, 20}}};
  FakeMethod late_{&class_, "late", "()V", {{0, 30}}};
  FakeMethod after_{&class_, "after", "()V", {{0, 40}}};
  uint8_t code_[0x40] = {};
  uint8_t other_code_[0x40] = {};  // where a recompilation goes
};

TEST_F(LifecycleJvmTest, ALoadDeferredJustBeforeVMDeathIsResolvedAttachedAndItsPinReleased) {
  Session& s = *state_;
  Load(early_, 0x1000);  // before VMInit: resolved in the callback
  HandleVMInit(s.lifecycle);
  for (int i = 0; i < 5000 && !s.lifecycle.Enter(true).defer(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(FakeJvm::attaches(), 1) << "the writer attached";
  Load(deferred_, 0x2000);

  // A callback that chose to defer is descheduled for 300 ms (three times what VM death used to
  // give it) between taking its ticket and queueing its load, while VMDeath runs.
  late_.declaring_class_delay_ms = 300;
  std::thread late([&] {
    FakeJvm::ActAsJvmThread();
    Load(late_, 0x3000);
  });
  while (FakeJvmti::delays_begun() == 0) std::this_thread::yield();
  HandleVMDeath(s, WaitBudget());
  late.join();
  EXPECT_EQ(FakeJvm::detaches(), 1) << "resolving done, the writer detached";
  Load(after_, 0x4000);  // from VM death on: resolved in the callback
  s.lifecycle.Close();
  ASSERT_TRUE(s.lifecycle.AwaitIdle(1000));
  s.writer.Finish(MonotonicNanos(), 5000);

  EXPECT_EQ(s.stats.deferred_loads.Get(), 2u);
  EXPECT_EQ(FakeJvmti::calls().unattached, 0) << "no JVMTI call from a thread the JVM does not know";
  EXPECT_EQ(FakeJvm::live_global_refs(), 0) << "every class pin released";
  EXPECT_EQ(s.stats.lookup_errors.Get(), 0u);
  EXPECT_EQ(s.stats.LostTotal(), 0u);
  EXPECT_EQ(WrittenNames(), (std::vector<std::string>{"app.Work.early()", "app.Work.deferred()", "app.Work.late()",
                                                      "app.Work.after()"}));
}

// HotSpot turns the phase DEAD as soon as VMDeath returns, and a load the ServiceThread is
// naming at that moment used to lose its name halfway (issue #16: 1 run in 12). VMDeath now
// waits for the lookups under way: this one, descheduled for 200 ms inside its lookups while
// VMDeath runs, is named; one that starts after the JVM refuses lookups is counted as unnamed
// after VM death and reported in one line at the default log level.
TEST_F(LifecycleJvmTest, VMDeathWaitsForALookupUnderWayAndLoadsTheDeadJvmCannotNameAreCounted) {
  Session& s = *state_;
  late_.declaring_class_delay_ms = 200;
  std::thread late([&] {
    FakeJvm::ActAsJvmThread();
    Load(late_, 0x3000);  // before VMInit: resolved in the callback
  });
  while (FakeJvmti::delays_begun() == 0) std::this_thread::yield();
  HandleVMDeath(s, WaitBudget());
  FakeJvmti::dead() = true;  // what HotSpot does once VMDeath has returned
  late.join();
  Load(after_, 0x4000);
  testing::internal::CaptureStderr();
  s.lifecycle.Close();
  ASSERT_TRUE(s.lifecycle.AwaitIdle(1000));
  s.writer.Finish(MonotonicNanos(), 5000);
  const std::string err = testing::internal::GetCapturedStderr();

  EXPECT_EQ(WrittenNames(), (std::vector<std::string>{"app.Work.late()", "[unknown Java method]"}));
  EXPECT_EQ(s.stats.unnamed_loads.Get(), 1u);
  EXPECT_EQ(s.stats.unnamed_after_vm_death.Get(), 1u);
  EXPECT_EQ(s.stats.LostTotal(), 0u);
  EXPECT_NE(err.find("1 compiled method(s) posted after VM death written as [unknown Java method]"),
            std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  const std::string json = s.stats.ToJson("", "");
  EXPECT_NE(json.find("\"unnamed_loads\":{\"total\":1,\"after_vm_death\":1}"), std::string::npos) << json;
}

// What HotSpot posts once VMDeath has returned is mostly a recompilation (C2 after C1, an OSR
// compile) of a method the writer named before: it keeps that name and its lines, though JVMTI
// refuses every lookup then. A method nothing named before still cannot be named.
TEST_F(LifecycleJvmTest, ALoadPostedAfterVMDeathIsNamedFromWhatTheWriterResolved) {
  Session& s = *state_;
  HandleVMInit(s.lifecycle);
  for (int i = 0; i < 5000 && !s.lifecycle.Enter(true).defer(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(FakeJvm::attaches(), 1) << "the writer attached";
  Load(deferred_, 0x2000);  // resolved by the writer
  HandleVMDeath(s, WaitBudget());
  FakeJvmti::dead() = true;  // what HotSpot does once VMDeath has returned
  Load(deferred_, 0x3000, other_code_);  // its recompilation, after VM death
  Load(after_, 0x4000, other_code_);     // never compiled before (replaces the recompilation)
  testing::internal::CaptureStderr();
  s.lifecycle.Close();
  ASSERT_TRUE(s.lifecycle.AwaitIdle(1000));
  s.writer.Finish(MonotonicNanos(), 5000);
  const std::string err = testing::internal::GetCapturedStderr();

  EXPECT_EQ(WrittenNames(), (std::vector<std::string>{"app.Work.deferred()", "app.Work.deferred()",
                                                      "[unknown Java method]"}));
  EXPECT_GE(s.stats.method_entries_handed_over.Get(), 1u);
  EXPECT_EQ(s.stats.method_hits_after_vm_death.Get(), 1u);
  EXPECT_EQ(s.stats.unnamed_loads.Get(), 1u);
  EXPECT_EQ(s.stats.unnamed_after_vm_death.Get(), 1u);
  EXPECT_EQ(s.stats.LostTotal(), 0u);
  EXPECT_NE(err.find("1 compiled method(s) posted after VM death"), std::string::npos) << err;
}

TEST(LifecycleTest, CloseJvmWaitsForOpenScopesAndLaterScopesAreNotLive) {
  Lifecycle lifecycle;
  ASSERT_TRUE(lifecycle.Start(nullptr));
  std::atomic<bool> entered{false};
  std::chrono::steady_clock::time_point left;
  std::thread holder([&] {
    const Lifecycle::JvmScope scope = lifecycle.EnterJvm();
    EXPECT_TRUE(scope.live());
    entered = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = std::chrono::steady_clock::now();
  });
  while (!entered) std::this_thread::yield();
  EXPECT_TRUE(lifecycle.CloseJvm(5000));
  const auto closed = std::chrono::steady_clock::now();
  holder.join();
  EXPECT_GE(closed, left) << "CloseJvm returned before the open scope ended";
  const Lifecycle::JvmScope later = lifecycle.EnterJvm();
  EXPECT_FALSE(later.live());
  EXPECT_TRUE(lifecycle.CloseJvm(0)) << "scopes that are not live are not waited for";
}

TEST(LifecycleTest, CloseJvmGivesUpOnAScopeThatStaysOpen) {
  Lifecycle lifecycle;
  ASSERT_TRUE(lifecycle.Start(nullptr));
  const Lifecycle::JvmScope open = lifecycle.EnterJvm();
  EXPECT_FALSE(lifecycle.CloseJvm(20));
}

}  // namespace
}  // namespace jitdump_agent
