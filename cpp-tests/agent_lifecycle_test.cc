// The agent's lifecycle transitions end to end (agent/jvmti/agent.h, agent/core/lifecycle.h), through the
// fake JVM: Agent_OnLoad / Agent_OnAttach with options start a session, `stop`, stop_after= and a
// deleted dump stop it, a later load starts a new one, VM death and Agent_OnUnload close it, and
// the races between them (a stop racing VM death, a start racing a stop). After every stop the
// test checks what "a visit leaves nothing behind" means: the events disabled, the dump closed
// with its CLOSE record, no descriptor and no thread of the agent's left, the writer detached
// from the JVM, the stats written.
#include "agent/jvmti/agent.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <jvmti.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/jvmti/callbacks.h"
#include "fake_jvm_test.h"
#include "fake_jvmti.h"
#include "test_dump_reader.h"

namespace jitdump_agent {
namespace {

using test_support::FakeJvm;
using test_support::FakeJvmti;
using test_support::FakeMethod;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kJitCodeClose = 3;

bool WaitFor(const std::function<bool()>& condition, int timeout_ms = 5000) {
  for (int waited = 0; waited < timeout_ms; ++waited) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

// The agent's threads in this process, by the name the writer gives itself.
int WriterThreads() {
  int count = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  while (const dirent* task = tasks != nullptr ? ::readdir(tasks) : nullptr) {
    if (task->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + task->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    count += name == "jitdump-writer";
  }
  if (tasks != nullptr) ::closedir(tasks);
  return count;
}

// What every descriptor of this process points at (the listing's own left out).
std::multiset<std::string> OpenFiles() {
  std::multiset<std::string> files;
  DIR* fds = ::opendir("/proc/self/fd");
  const int own = fds != nullptr ? ::dirfd(fds) : -1;
  while (const dirent* fd = fds != nullptr ? ::readdir(fds) : nullptr) {
    if (fd->d_name[0] == '.' || std::atoi(fd->d_name) == own) continue;
    char target[4096];
    const ssize_t n = ::readlink((std::string("/proc/self/fd/") + fd->d_name).c_str(), target, sizeof target - 1);
    files.insert(n > 0 ? std::string(target, static_cast<size_t>(n)) : "?");
  }
  if (fds != nullptr) ::closedir(fds);
  return files;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AgentLifecycleTest : public test_support::FakeJvmTest {
 protected:
  void SetUp() override {
    FakeJvmTest::SetUp();
    files_before_ = OpenFiles();
  }
  void TearDown() override {
    // Whatever a test left running ends here (and releases the process claim).
    agent_->VMDeath();
    agent_->Unload();
    delete agent_;
    FakeJvmTest::TearDown();
  }

  jint Load(const std::string& options, bool attach = true) {
    return agent_->Load(jvm_.vm(), options.c_str(), attach);
  }
  std::string Dir(const std::string& name) { return dir_ + "/" + name; }
  std::string DumpIn(const std::string& name) { return Dir(name) + "/jit-" + std::to_string(::getpid()) + ".dump"; }

  // A compiled load of `method`: kCodeSize bytes of code in `slot` of the fake code cache.
  void PostLoad(FakeMethod& method, size_t slot) {
    const uint8_t* code = code_.data() + slot * kCodeSize;
    PostCompiledLoad(agent_->lifecycle(), method, code, kCodeSize, code + 0x10);
  }

  // A stopped agent keeps nothing: no event enabled, no session, no writer thread, no
  // descriptor it did not have before it started, the writer detached from the JVM; `dump`
  // ends with its CLOSE record.
  void ExpectNothingLeftBehind(const std::string& dump) {
    EXPECT_EQ(agent_->lifecycle().phase(), Phase::kDormant);
    EXPECT_EQ(agent_->session(), nullptr);
    EXPECT_EQ(FakeJvmti::enabled_count(), 0) << "every event disabled: HotSpot's own cost goes too";
    EXPECT_TRUE(WaitFor([] { return WriterThreads() == 0; })) << "the writer thread has exited";
    EXPECT_EQ(OpenFiles(), files_before_) << "no descriptor of the agent's left open";
    EXPECT_EQ(FakeJvm::attaches(), FakeJvm::detaches()) << "no thread left attached to the JVM";
    const auto records = test_support::WalkRecords(test_support::ReadFileBytes(dump));
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.back().id, kJitCodeClose) << dump << " ends with JIT_CODE_CLOSE";
  }

  Agent* agent_ = new Agent();
  std::multiset<std::string> files_before_;
  FakeMethod first_{&class_, "first", "()V", {{0, 10}}};
  FakeMethod second_{&class_, "second", "()V", {{0, 20}}};
  static constexpr size_t kCodeSize = 0x40;
  std::vector<uint8_t> code_ = std::vector<uint8_t>(4096 * kCodeSize, 0x90);
};

// dormant -> naming -> deferring (attach) -> stopping -> dormant, then a new start.
TEST_F(AgentLifecycleTest, AStopLeavesNothingBehindAndALaterAttachStartsANewSession) {
  const int replays_before = FakeJvmti::calls().generate_events;
  ASSERT_EQ(Load("dir=" + Dir("one") + ",flush_ms=1,stats=" + Dir("one") + "/stats.json"), JNI_OK);
  EXPECT_EQ(FakeJvmti::calls().generate_events, replays_before + 2) << "an attach replays stubs and methods";
  EXPECT_EQ(FakeJvmti::enabled_count(), 5);
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDeferring; })) << "the writer attached";
  EXPECT_EQ(WriterThreads(), 1);
  PostLoad(first_, 1);

  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("one"));
  EXPECT_EQ(LoadNames(DumpIn("one")), std::vector<std::string>{"app.Work.first()"});
  const std::string stats = ReadText(Dir("one") + "/stats.json");
  EXPECT_NE(stats.find("\"stopped_by\":\"stop\""), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"lost\":{\"total\":0,"), std::string::npos) << stats;
  PostLoad(second_, 2);  // a callback HotSpot had begun: no session takes it
  const off_t closed_size = test_support::ReadFileBytes(DumpIn("one")).size();

  // A second visit: a new dump in another directory, the code compiled so far replayed again.
  ASSERT_EQ(Load("dir=" + Dir("two") + ",flush_ms=1"), JNI_OK);
  EXPECT_EQ(FakeJvmti::calls().generate_events, replays_before + 4);
  EXPECT_EQ(FakeJvmti::enabled_count(), 5);
  PostLoad(second_, 2);
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("two"));
  EXPECT_EQ(LoadNames(DumpIn("two")), std::vector<std::string>{"app.Work.second()"});
  EXPECT_EQ(static_cast<off_t>(test_support::ReadFileBytes(DumpIn("one")).size()), closed_size)
      << "the first visit's dump stays as it was closed";
  EXPECT_EQ(FakeJvmti::calls().dispose_environment, 0) << "one environment serves every session";
}

// A session loaded with the JVM (Agent_OnLoad, VMInit) stops on request just as well.
TEST_F(AgentLifecycleTest, ASessionStartedWithTheJvmStopsOnRequest) {
  ASSERT_EQ(Load("dir=" + Dir("start") + ",flush_ms=1", /*attach=*/false), JNI_OK);
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kNaming) << "before VMInit, callbacks name loads";
  PostLoad(first_, 1);
  HandleVMInit(agent_->lifecycle());
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDeferring; }));
  PostLoad(second_, 2);
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("start"));
  EXPECT_EQ(LoadNames(DumpIn("start")), (std::vector<std::string>{"app.Work.first()", "app.Work.second()"}));
}

// stop_after=: the writer stops its own session (attaching to the JVM to disable the events)
// and frees it; nobody else is involved.
TEST_F(AgentLifecycleTest, StopAfterEndsTheSessionWithoutAnyoneAsking) {
  ASSERT_EQ(Load("dir=" + Dir("timed") + ",flush_ms=1,resolve=callback,stop_after=1,stats=" + Dir("timed") +
                 "/stats.json"),
            JNI_OK);
  PostLoad(first_, 1);
  const auto start = Clock::now();
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDormant; }, 5000));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  EXPECT_GE(took, 700);
  EXPECT_LT(took, 3000);
  EXPECT_EQ(FakeJvmti::calls().unattached, 0) << "the writer attached before disabling the events";
  ExpectNothingLeftBehind(DumpIn("timed"));
  EXPECT_TRUE(WaitFor([&] { return ReadText(Dir("timed") + "/stats.json").find("\"stopped_by\":\"stop_after\"") !=
                                   std::string::npos; }));
}

// A dump deleted under the agent (rm -rf of the run directory) is noticed and the session
// stops; a later attach starts a new one.
TEST_F(AgentLifecycleTest, ADeletedDumpStopsItsSession) {
  ASSERT_EQ(Load("dir=" + Dir("gone") + ",flush_ms=1"), JNI_OK);
  PostLoad(first_, 1);
  testing::internal::CaptureStderr();
  ASSERT_EQ(::unlink(DumpIn("gone").c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDormant; }));
  ASSERT_TRUE(WaitFor([] { return WriterThreads() == 0; }));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("was deleted while the agent wrote it"), std::string::npos) << err;
  EXPECT_EQ(FakeJvmti::enabled_count(), 0);
  EXPECT_EQ(OpenFiles(), files_before_);
  ASSERT_EQ(Load("dir=" + Dir("next") + ",flush_ms=1"), JNI_OK);
  EXPECT_EQ(FakeJvmti::enabled_count(), 5);
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("next"));
}

// An attach that finds the running session's dump deleted (before its writer noticed) replaces
// the session instead of ignoring its options.
TEST_F(AgentLifecycleTest, AnAttachFindingTheDumpDeletedStartsANewSession) {
  ASSERT_EQ(Load("dir=" + Dir("old") + ",flush_ms=1000"), JNI_OK);
  ASSERT_EQ(::unlink(DumpIn("old").c_str()), 0);
  testing::internal::CaptureStderr();
  ASSERT_EQ(Load("dir=" + Dir("new") + ",flush_ms=1"), JNI_OK);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("was deleted: stopping that session and starting a new one"), std::string::npos) << err;
  EXPECT_EQ(agent_->session()->writer.dump_path(), DumpIn("new"));
  PostLoad(first_, 1);
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("new"));
  EXPECT_EQ(LoadNames(DumpIn("new")), std::vector<std::string>{"app.Work.first()"});
}

// A second load with other options while a session runs changes nothing and says how to.
TEST_F(AgentLifecycleTest, OptionsOfALoadWhileASessionRunsAreIgnoredWithTheWayOut) {
  ASSERT_EQ(Load("dir=" + Dir("a") + ",flush_ms=1"), JNI_OK);
  testing::internal::CaptureStderr();
  ASSERT_EQ(Load("dir=" + Dir("b")), JNI_OK);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("are ignored. Stop the session first (jitdump-attach PID stop"), std::string::npos) << err;
  EXPECT_EQ(agent_->session()->writer.dump_path(), DumpIn("a"));
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("a"));
  ASSERT_EQ(Load("stop"), JNI_OK) << "stopping a dormant agent is no error";
}

// max_size=: the dump stops growing at the cap, the rest is counted, one warning.
TEST_F(AgentLifecycleTest, TheSizeCapStopsTheDumpAndCountsTheRest) {
  ASSERT_EQ(Load("dir=" + Dir("cap") + ",flush_ms=1,max_size=64K,stats=" + Dir("cap") + "/stats.json"), JNI_OK);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2000; ++i) PostLoad(first_, 10 + static_cast<size_t>(i));
  ASSERT_EQ(Load("stop"), JNI_OK);
  const std::string err = testing::internal::GetCapturedStderr();
  ExpectNothingLeftBehind(DumpIn("cap"));
  struct stat st {};
  ASSERT_EQ(::stat(DumpIn("cap").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 64 << 10);
  EXPECT_GT(st.st_size, 60 << 10);
  const std::string stats = ReadText(Dir("cap") + "/stats.json");
  const size_t at = stats.find("\"size_cap\":");
  ASSERT_NE(at, std::string::npos) << stats;
  const uint64_t capped = std::stoull(stats.substr(at + 11));
  const size_t written = LoadNames(DumpIn("cap")).size();
  EXPECT_GT(capped, 0u);
  EXPECT_EQ(written + capped, 2000u) << "every load written or counted";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("reached max_size=65536 bytes"), std::string::npos) << err;
}

// A stop racing VM death: the stop waits for a callback in flight when the JVM starts to exit.
// VM death and unload still return within the budget, and the dump is closed once.
TEST_F(AgentLifecycleTest, AStopRacingVmDeathEndsWithinTheBudget) {
  ASSERT_EQ(Load("dir=" + Dir("race") + ",flush_ms=1,stats=" + Dir("race") + "/stats.json"), JNI_OK);
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDeferring; }));
  // A callback descheduled for 800 ms inside its lookups holds its ticket meanwhile.
  first_.declaring_class_delay_ms = 800;
  std::thread slow([&] {
    FakeJvm::ActAsJvmThread();
    PostLoad(first_, 1);
  });
  while (FakeJvmti::delays_begun() == 0) std::this_thread::yield();
  std::thread stop([&] {
    FakeJvm::ActAsJvmThread();
    EXPECT_EQ(Load("stop"), JNI_OK);
  });
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kStopping; }));
  const auto start = Clock::now();
  agent_->VMDeath();
  agent_->Unload();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  stop.join();
  slow.join();
  EXPECT_LT(took, kJvmWaitBudgetMs + 500) << "VM death and unload wait within one budget";
  EXPECT_EQ(WriterThreads(), 0);
  EXPECT_EQ(FakeJvm::attaches(), FakeJvm::detaches());
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(DumpIn("race")));
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().id, kJitCodeClose);
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const auto& r) { return r.id == kJitCodeClose; }), 1);
  EXPECT_EQ(LoadNames(DumpIn("race")), std::vector<std::string>{"app.Work.first()"}) << "the slow load is written";
  const std::string stats = ReadText(Dir("race") + "/stats.json");
  EXPECT_NE(stats.find("\"lost\":{\"total\":0,"), std::string::npos) << stats;
}

// The other order: VM death first, then a stop (stop_after= expiring on the writer): VM death
// owns the end; the stop does nothing.
TEST_F(AgentLifecycleTest, VmDeathFirstThenAStopChangesNothing) {
  ASSERT_EQ(Load("dir=" + Dir("dying") + ",flush_ms=1"), JNI_OK);
  agent_->VMDeath();
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kDead);
  ASSERT_EQ(Load("stop"), JNI_OK);
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kDead);
  agent_->Unload();
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kClosed);
  EXPECT_EQ(WriterThreads(), 0);
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(DumpIn("dying")));
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().id, kJitCodeClose);
  EXPECT_NE(Load("dir=" + Dir("late")), JNI_OK) << "no session starts once the JVM is exiting";
}

// VM death while dormant: nothing to close, nothing written, unload returns at once.
TEST_F(AgentLifecycleTest, VmDeathWhileDormantClosesNothing) {
  ASSERT_EQ(Load("dir=" + Dir("once") + ",flush_ms=1"), JNI_OK);
  ASSERT_EQ(Load("stop"), JNI_OK);
  const auto start = Clock::now();
  agent_->VMDeath();
  agent_->Unload();
  agent_->Unload();  // once per load of the library
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count(), 100);
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kClosed);
}

// A start racing a stop: the session ends on its own (stop_after=) while a callback keeps it
// stopping; an attach that comes meanwhile waits for it and starts the new session.
TEST_F(AgentLifecycleTest, AStartRacingAStopWaitsForItAndStarts) {
  ASSERT_EQ(Load("dir=" + Dir("first") + ",flush_ms=1,stop_after=1"), JNI_OK);
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kDeferring; }));
  first_.declaring_class_delay_ms = 2500;  // holds its ticket past the deadline
  std::thread slow([&] {
    FakeJvm::ActAsJvmThread();
    PostLoad(first_, 1);
  });
  ASSERT_TRUE(WaitFor([&] { return agent_->lifecycle().phase() == Phase::kStopping; }, 3000));
  EXPECT_EQ(Load("dir=" + Dir("second") + ",flush_ms=1"), JNI_OK);
  slow.join();
  ASSERT_NE(agent_->session(), nullptr);
  EXPECT_EQ(agent_->session()->writer.dump_path(), DumpIn("second"));
  const auto records = test_support::WalkRecords(test_support::ReadFileBytes(DumpIn("first")));
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back().id, kJitCodeClose) << "the first session closed before the second started";
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("second"));
}

// A start that fails (an unusable directory) leaves nothing, and a corrected load starts.
TEST_F(AgentLifecycleTest, AFailedStartLeavesNothingAndACorrectedLoadStarts) {
  std::ofstream(Dir("file")) << "not a directory";  // refused for root too
  testing::internal::CaptureStderr();
  EXPECT_EQ(Load("dir=" + Dir("file") + "/jit"), JNI_ERR);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot create output directory"), std::string::npos) << err;
  EXPECT_EQ(agent_->lifecycle().phase(), Phase::kDormant);
  EXPECT_EQ(FakeJvmti::calls().dispose_environment, 1) << "the environment this start obtained is given back";
  EXPECT_EQ(OpenFiles(), files_before_);
  ASSERT_EQ(Load("dir=" + Dir("fixed") + ",flush_ms=1"), JNI_OK);
  ASSERT_EQ(Load("stop"), JNI_OK);
  ExpectNothingLeftBehind(DumpIn("fixed"));
}

}  // namespace
}  // namespace jitdump_agent
