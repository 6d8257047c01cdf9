// The agent (agent.h): the JVM's part of each lifecycle transition. Who runs which:
//
//   start      Agent_OnLoad, or Agent_OnAttach with options (the Attach Listener)
//   stop       Agent_OnAttach with `stop` (the Attach Listener); the session's own writer thread
//              when stop_after= has passed or its dump was deleted; a start that finds the
//              active session's dump deleted
//   VM death   the VMDeath callback, then Agent_OnUnload on the same thread
//
// A transition decides under transition_ (a start, the first half of a stop, VM death) and waits
// outside it, so no holder ever waits for the writer thread, which takes it only with try_lock.
// Every wait a JVM thread sees draws on one WaitBudget (wait_budget.h).
#include "agent/jvmti/agent.h"

#include <fcntl.h>
#include <jvmti.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "agent/jvmti/callbacks.h"
#include "agent/core/clock.h"
#include "agent/core/config.h"
#include "agent/core/event_blocks.h"
#include "agent/core/interpreter_layout.h"
#include "agent/jvmti/jvm_method_source.h"
#include "agent/jvmti/jvm_resolver.h"
#include "agent/core/jvm_version.h"
#include "agent/core/live_code.h"
#include "agent/core/log.h"
#include "agent/core/process_claim.h"
#include "agent/core/vm_structs.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {
namespace {

using std::chrono::milliseconds;

bool Active(Phase phase) { return phase == Phase::kNaming || phase == Phase::kDeferring; }

// Holds the directory of stats=PATH from the start (stats are written when the session ends,
// when the path could lead elsewhere). Leaves it unopened, after a warning, when it cannot be used.
void HoldStatsDirectory(Session* s) {
  if (s->options.stats.empty() || s->options.stats == "stderr") return;
  const std::string dir = jitdump::DirectoryOf(ExpandPid(s->options.stats, s->pid));
  const jitdump::Status status = s->stats_dir.Open(dir, 0755);
  if (!status.ok()) {
    LogUnusableDirectory(LogLevel::kWarn, s->stats_dir, dir, status,
                         {"stats directory", "cannot write stats to", "no stats will be written",
                          "no stats will be written"});
  }
}

// Blocks every signal on this thread while it lives (the writer thread inherits the mask it is
// created with), and restores the previous mask on every path out.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous_);
  }
  ~AllSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// What a start that stops before its session runs must undo, on every path out (an exception
// included): the process claim released, and an environment this start obtained disposed, so
// that a later load can start the agent and a failed attach leaves nothing behind.
class StartUndo {
 public:
  explicit StartUndo(jvmtiEnv*& jvmti) : jvmti_(jvmti) {}
  ~StartUndo() {
    if (done_) return;
    if (new_env_ && jvmti_ != nullptr) {
      jvmti_->DisposeEnvironment();
      jvmti_ = nullptr;
    }
    ReleaseProcess();
  }
  StartUndo(const StartUndo&) = delete;
  StartUndo& operator=(const StartUndo&) = delete;
  void NewEnvironment() { new_env_ = true; }
  void Done() { done_ = true; }

 private:
  jvmtiEnv*& jvmti_;
  bool new_env_ = false;
  bool done_ = false;
};

// The JVM's java.vm.version ("17.0.21.1+2-1-deb12u1-Debian"); empty when JVMTI will not say.
std::string JvmVersionText(jvmtiEnv* jvmti) {
  char* text = nullptr;
  if (jvmti->GetSystemProperty("java.vm.version", &text) != JVMTI_ERROR_NONE || text == nullptr) return {};
  std::string version(text);
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(text));
  return version;
}

// Whether loads may be resolved on the writer thread (see jvm_version.h).
bool ResolveInWriter(jvmtiEnv* jvmti, ResolveIn resolve) {
  if (resolve != ResolveIn::kAuto) return resolve == ResolveIn::kWriter;
  const std::optional<JvmVersion> version = ParseJvmVersion(JvmVersionText(jvmti));
  const bool safe = version && LooksUpStaleMethodIdsSafely(*version);
  if (!safe) Log(LogLevel::kInfo, "this JVM resolves stale method ids unsafely: looking up names inside callbacks");
  return safe;
}

// interp=on: whether this JVM's interpreted frames can be described (interpreter_layout.h),
// and if so the method table's JVM side. Says once, at start-up, why not; nothing else changes.
void SetUpMethodTable(Session& s) {
  const auto unavailable = [&s](const std::string& why) {
    s.stats.method_table_state.store(static_cast<int>(Stats::MethodTableState::kUnavailable),
                                     std::memory_order_relaxed);
    Log(LogLevel::kWarn, "interp=on: interpreted frames will not be named: %s; everything else is recorded as usual",
        why.c_str());
  };
  if (s.resolver == nullptr) {
    unavailable("names are not resolved on the writer thread here (resolve=callback, or a JVM before 17.0.14 or "
                "21.0.3), and the method table is read there");
    return;
  }
  const std::string version = JvmVersionText(s.jvmti);
  const std::optional<VmStructsTables> tables = FindVmStructs();
  std::optional<VmStructs> structs;
  if (tables) structs.emplace(*tables);
#if defined(__x86_64__)
  constexpr bool kX86_64 = true;
#else
  constexpr bool kX86_64 = false;
#endif
  const LayoutDecision decision = DecideInterpreterLayout(structs ? &*structs : nullptr, ParseJvmVersion(version), kX86_64);
  if (!decision.layout) {
    unavailable(decision.why_not);
    return;
  }
  jvmtiCapabilities caps{};
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  if (s.jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) {
    unavailable("the JVM refused the line-number capabilities");
    return;
  }
  s.method_source.reset(new (std::nothrow) JvmMethodSource(s.vm, s.jvmti, *decision.layout, s.stats));
  if (s.method_source == nullptr) {
    unavailable("out of memory");
    return;
  }
  s.writer.EnableMethodTable(*decision.layout, Printable(version, 200), s.method_source.get());
}

uint64_t EventsSeen(const Session& s) {
  return s.stats.compiled_method_load.Get() + s.stats.dynamic_code_generated.Get() +
         s.stats.compiled_method_unload.Get() + s.stats.class_prepare.Get();
}

void VMDeathHook() { TheAgent().VMDeath(); }

}  // namespace

Agent& TheAgent() {
  static Agent* const agent = new Agent();  // never freed (agent.h)
  return *agent;
}

void Agent::WriteStats(Session* s) {
  if (s->options.stats.empty() || s->stats_written.exchange(true)) return;
  try {
    WriteStatsFile(s);
  } catch (...) {  // no memory for the JSON: another thread of the session's end may try again
    s->stats_written.store(false);
  }
}

void Agent::WriteStatsFile(Session* s) {
  const std::string json = s->stats.ToJson(s->writer.dump_path(), s->writer.perfmap_path(),
                                           StopCauseName(static_cast<StopCause>(s->stats.stop_cause.load())));
  if (s->options.stats == "stderr") {
    const std::string line = "jitdumpagent: stats: " + json;
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    return;
  }
  const std::string path = ExpandPid(s->options.stats, s->pid);
  if (!s->stats_dir.is_open()) return;  // refused at the start, with a message then
  // Same rules as the dump: in the directory held since the start, never through a symlink,
  // never over another user's file or one written since this session started (another JVM with
  // the same pid). The file appears whole or not at all.
  const jitdump::CreateRules rules{O_WRONLY, static_cast<mode_t>(s->options.mode), s->start_realtime_ns};
  const std::string name(jitdump::BaseName(path));
  std::string written = name;
  int fd = -1;
  jitdump::Status status = jitdump::CreateWithContentsAt(s->stats_dir.fd(), name, rules, json.data(), json.size(), &fd);
  // Taken by another live JVM with the same pid (another pid namespace sharing the directory):
  // stats-1.json becomes stats-1-2.json, and so on.
  for (int n = 2; !status.ok() && status.err_no() == jitdump::kInUse && n <= 9; ++n) {
    const size_t dot = name.rfind('.');
    written = dot == std::string::npos || dot == 0 ? name + "-" + std::to_string(n)
                                                   : name.substr(0, dot) + "-" + std::to_string(n) + name.substr(dot);
    status = jitdump::CreateWithContentsAt(s->stats_dir.fd(), written, rules, json.data(), json.size(), &fd);
  }
  const std::string dir = s->stats_dir.path() + "/";
  if (!status.ok()) {
    Log(LogLevel::kWarn, "cannot write stats to %s: %s", PrintablePath(path).c_str(), status.ToString().c_str());
  } else {
    if (written != name) {
      Log(LogLevel::kWarn,
          "%s was written by another live process with the same pid (a JVM in another pid namespace sharing this "
          "directory?); wrote the stats to %s instead",
          PrintablePath(dir + name).c_str(), PrintablePath(dir + written).c_str());
    }
    ::close(fd);
  }
  s->stats_dir = jitdump::HeldDirectory();  // a stopped session holds no descriptor
}

// HotSpot checks that an event is enabled, builds its compile_info and only then calls us: an
// event taken up before the events were disabled (or before the phase turned DEAD) can reach a
// callback afterwards (seen: one load in five javac runs at exit). Before refusing events, wait
// until none has arrived and none is in flight for kQuietMs (at most kMaxWaitMs, within budget).
void Agent::AwaitQuiet(const Session& s, const WaitBudget& budget) const {
  constexpr uint32_t kQuietMs = 5;
  constexpr uint32_t kMaxWaitMs = 200;
  const uint32_t limit = std::min(kMaxWaitMs, budget.RemainingMs());
  uint64_t seen = EventsSeen(s);
  for (uint32_t waited = 0, quiet = 0; waited < limit && quiet < kQuietMs; ++waited) {
    ::usleep(1000);
    const uint64_t now = EventsSeen(s);
    const bool idle = now == seen && lifecycle_.in_flight() == 0;
    quiet = idle ? quiet + 1 : 0;
    seen = now;
  }
}

void Agent::FreeRetired() {
  std::lock_guard<std::mutex> lock(retired_mutex_);
  // A ticket taken from now on reads the current session, never a retired one.
  if (retired_.empty() || lifecycle_.in_flight() != 0) return;
  for (Session* s : retired_) delete s;
  retired_.clear();
}

// A load while a session runs: nothing changes. Says so at warn level when it asked for
// something else, since its options will not take effect.
void Agent::ExplainIgnoredLoad(const std::string& options) {
  const Session* s = session();
  if (options == active_options_) {
    Log(LogLevel::kInfo, "already running in this JVM with the same options; ignoring the second load");
    return;
  }
  Log(LogLevel::kWarn,
      "already running in this JVM, writing %s with the options it was started with ('%s'); the options of this "
      "load ('%s') are ignored. Stop the session first (jitdump-attach PID stop, or load the agent with `stop`), "
      "then load it with the options you want",
      s != nullptr ? PrintablePath(s->writer.dump_path()).c_str() : "its dump",
      Printable(active_options_, 200).c_str(), Printable(options, 200).c_str());
}

jint Agent::Load(JavaVM* vm, const char* option_text, bool attach) noexcept {
  try {
    const std::string option_string = option_text != nullptr ? option_text : "";
    Options options;
    const ParseResult parsed =
        LoadOptions(option_string, std::getenv(kOptionsEnvironmentVariable), ReadConfigFile, options);
    SetLogLevel(options.log);
    if (options.help) {
      const std::string& help = OptionsHelp();
      (void)!::write(STDERR_FILENO, help.data(), help.size());
      return JNI_OK;
    }
    // What a load that writes nothing returns. At JVM start JNI_ERR would stop the JVM: only with
    // `strict`. A late attach returns JNI_ERR, so the attach reports a non-zero return code
    // (jitdump attach then says nothing will be written); the JVM runs on either way.
    const jint failure = options.strict || attach ? JNI_ERR : JNI_OK;
    if (!parsed.ok()) {
      for (const OptionError& error : parsed.errors) Log(LogLevel::kError, "%s", FormatOptionError(error).c_str());
      if (options.strict) {
        Log(LogLevel::kError, "strict: refusing to start");
        return JNI_ERR;
      }
      Log(LogLevel::kError, "the agent is disabled; the JVM runs on (add 'strict' to stop the JVM instead)");
      return failure;
    }
    const WaitBudget budget;
    Lock lock(transition_, std::defer_lock);
    if (!lock.try_lock_for(milliseconds(budget.RemainingMs()))) {
      Log(LogLevel::kError, "another start or stop of the agent took longer than %u ms; this load changes nothing: "
          "try again", kJvmWaitBudgetMs);
      return failure;
    }
    FreeRetired();
    if (options.stop) return StopRequested(lock, budget);
    Phase phase = lifecycle_.phase();
    if (phase == Phase::kStopping) {
      // The previous session is still closing (its writer ending on its own): start once it has.
      lock.unlock();
      (void)lifecycle_.AwaitPhaseOtherThan(Phase::kStopping, budget.RemainingMs());
      if (!lock.try_lock_for(milliseconds(budget.RemainingMs())) || lifecycle_.phase() == Phase::kStopping) {
        Log(LogLevel::kError, "the previous session of the agent is still closing (a slow disk?); this load changes "
            "nothing: try again in a moment");
        return failure;
      }
      phase = lifecycle_.phase();
    }
    if (Active(phase)) {
      Session* s = session();
      if (s == nullptr || !s->writer.DumpDeleted()) {
        ExplainIgnoredLoad(option_string);
        return JNI_OK;  // the agent runs (another load's), and that load keeps the library mapped
      }
      Log(LogLevel::kWarn, "%s, the dump of the running session, was deleted: stopping that session and starting a "
          "new one", PrintablePath(s->writer.dump_path()).c_str());
      StopActive(lock, budget, StopCause::kReplaced);
      phase = lifecycle_.phase();
    }
    if (phase != Phase::kDormant) {
      Log(LogLevel::kWarn, "the JVM is shutting down (the agent is %s); not starting", PhaseName(phase));
      return failure;
    }
    return Start(lock, vm, options, option_string, attach);
  } catch (...) {
    Log(LogLevel::kError, "unexpected failure while starting; the agent is disabled");
    return JNI_OK;
  }
}

jint Agent::Start(Lock& lock, JavaVM* vm, const Options& parsed, const std::string& option_string, bool attach) {
  const jint failure = parsed.strict || attach ? JNI_ERR : JNI_OK;
  const Claim claim = ClaimProcess();
  if (claim == Claim::kHeldByAnotherCopy) {
    Log(LogLevel::kWarn,
        "another copy of libjitdumpagent already runs in this JVM; this copy (options '%s') stays inactive and "
        "touches no file. Load the agent once (are both -agentpath and JAVA_TOOL_OPTIONS naming it?)",
        Printable(option_string, 200).c_str());
    return JNI_OK;
  }
  if (claim == Claim::kHeldByThisCopy) {  // a session whose writer never finished still holds it
    Log(LogLevel::kError, "the previous session of the agent never finished closing (a hung disk?); not starting");
    return failure;
  }
  StartUndo undo(jvmti_);  // from here on every early return undoes what it did

  if (jvmti_ == nullptr) {
    jvmtiEnv* jvmti = nullptr;
    if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK || jvmti == nullptr) {
      Log(LogLevel::kError, "this JVM offers no JVMTI 1.2 environment; the agent is disabled");
      return failure;
    }
    jvmti_ = jvmti;
    undo.NewEnvironment();
  }
  vm_ = vm;
  jvmtiCapabilities required{};
  required.can_generate_compiled_method_load_events = 1;
  if (jvmti_->AddCapabilities(&required) != JVMTI_ERROR_NONE) {
    Log(LogLevel::kError, "the JVM refused can_generate_compiled_method_load_events; the agent is disabled");
    return failure;
  }
  bool lines = parsed.lines || parsed.inline_info;
  if (lines) {
    jvmtiCapabilities line_caps{};
    line_caps.can_get_line_numbers = 1;
    line_caps.can_get_source_file_name = 1;
    jvmtiJlocationFormat format;
    if (jvmti_->GetJLocationFormat(&format) != JVMTI_ERROR_NONE || format != JVMTI_JLOCATION_JVMBCI ||
        jvmti_->AddCapabilities(&line_caps) != JVMTI_ERROR_NONE) {
      Log(LogLevel::kWarn, "this JVM offers no line numbers; writing the dump without source lines");
      lines = false;
    }
  }

  const uint32_t pid = static_cast<uint32_t>(::getpid());
  Options options = parsed;
  for (std::string* path : {&options.dir, &options.perfmap_dir}) *path = ExpandPid(*path, pid);
  // Freed on every failure below (nothing outside reaches it before the lifecycle has it).
  std::unique_ptr<Session> session(new (std::nothrow) Session(options, lifecycle_));
  if (session == nullptr) {
    Log(LogLevel::kError, "out of memory while starting; the agent is disabled");
    return failure;
  }
  Session* s = session.get();
  s->jvmti = jvmti_;
  s->vm = vm;
  s->pid = pid;
  s->attached = attach;
  s->naming.reset(new (std::nothrow) JvmtiLoadNaming(jvmti_, s->options, lines, lines && options.lines, s->stats));
  if (s->naming == nullptr || !s->queue.lock_free()) {
    Log(LogLevel::kError, "cannot set up the record queue; the agent is disabled");
    return failure;
  }
  if (ResolveInWriter(jvmti_, options.resolve)) {
    // Null (no memory) leaves every load resolved in its callback.
    s->resolver.reset(new (std::nothrow) JvmResolver(vm, jvmti_, s->options, lines, lines && options.lines, s->stats));
  }
  lifecycle_.SetResolver(s->resolver.get());
  if (options.interp) SetUpMethodTable(*s);
  s->stats.bounds = {options.cache_entries, options.budget_bytes, RecordQueue::kMaxQueueNodes,
                     EventBlocks::kMaxPooledBytes, CodeHistory::kMaxSpans, LiveCode::kMaxEntries,
                     IntrinsicStage::kMaxHeld, EffectiveMaxSize(options.max_size, attach),
                     options.interp ? MethodTableWriter::kMaxTracked : 0};
  s->writer.SetMaxSize(s->stats.bounds.dump_bytes);
  const uint64_t start_time = MonotonicNanos();
  if (options.stop_after_s != 0) s->writer.SetDeadline(start_time + options.stop_after_s * 1000000000ull);
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  s->start_realtime_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  if (!s->writer.Open(pid, start_time)) return failure;  // said why; nothing to write to
  HoldStatsDirectory(s);
  s->writer.SetHooks([this, s](StopCause cause) { return StopFromWriter(s, cause); }, [this, s] { SessionEnded(s); });
  bool started = false;
  {
    // The writer must never take process-directed signals (SIGTERM, SIGINT, SIGQUIT...) that
    // HotSpot expects to handle on its own threads: start it with everything blocked. This
    // (JVM) thread gets its own mask back on every path, a failed start included.
    AllSignalsBlocked blocked;
    started = s->writer.Start();
  }
  if (!started) {
    Log(LogLevel::kError,
        "cannot start the writer thread (the system refused a new thread: out of memory or a thread limit?); "
        "the agent is disabled and leaves no dump behind; a later attach can try again");
    s->writer.Abandon();
    return failure;
  }
  // The session runs: from here on it ends as every session does (a stop), never by the undo.
  undo.Done();
  (void)session.release();
  active_options_ = option_string;
  (void)lifecycle_.Start(s);

  const jvmtiError error = EnableEvents(*s, VMDeathHook);
  if (error != JVMTI_ERROR_NONE) {
    Log(LogLevel::kError, "enabling JVMTI events failed (error %d); the agent is disabled", error);
    StopActive(lock, WaitBudget(), StopCause::kFailedStart);
    // A failed attach would have the library unloaded; the JVM keeps it mapped (-z nodelete),
    // but nothing of it runs now either way.
    return attach ? JNI_OK : failure;
  }
  if (attach) {
    lifecycle_.BeginDeferring();  // live already: no VMInit comes
    ReplayExistingCode(*s);
  }
  return JNI_OK;
}

jint Agent::StopRequested(Lock& lock, const WaitBudget& budget) {
  Phase phase = lifecycle_.phase();
  if (Active(phase)) {
    const std::string dump = session()->writer.dump_path();
    StopActive(lock, budget, StopCause::kRequested);
    Log(LogLevel::kInfo, "stopped: %s is closed; the agent is dormant until a load with options",
        PrintablePath(dump).c_str());
    return JNI_OK;
  }
  if (phase == Phase::kStopping) {  // stopping on its own: the stop returns once it has
    lock.unlock();
    phase = lifecycle_.AwaitPhaseOtherThan(Phase::kStopping, budget.RemainingMs());
    Log(LogLevel::kInfo, "the session was already stopping; the agent is %s", PhaseName(phase));
    return JNI_OK;
  }
  Log(LogLevel::kInfo, "no session is running (the agent is %s); nothing to stop", PhaseName(phase));
  return JNI_OK;
}

void Agent::StopActive(Lock& lock, const WaitBudget& budget, StopCause cause) {
  Session* s = session();
  if (s == nullptr || !Active(lifecycle_.phase())) return;
  // HotSpot stops building the events (its own cost of them goes with them) ...
  const jvmtiError disabled = DisableEvents(jvmti_);
  if (disabled != JVMTI_ERROR_NONE) {
    Log(LogLevel::kWarn, "disabling the JVMTI events failed (error %d); the session stops all the same", disabled);
  }
  // ... but may still deliver one it took up before: those are taken and written.
  AwaitQuiet(*s, budget);
  s->stats.stop_cause.store(static_cast<int>(cause));
  s->freed_by_stopper.store(true);  // SessionEnded leaves the freeing to this thread
  (void)lifecycle_.BeginStop();
  lock.unlock();
  (void)lifecycle_.AwaitIdle(budget.RemainingMs());
  s->writer.Finish(MonotonicNanos(), budget.RemainingMs(), /*sync=*/true);
  const bool finished = s->writer.finished();
  // A writer stuck in a write (a hung mount) still holds records nobody will write: each counts
  // as lost to the stall, so the stats still account for every code blob.
  if (!finished) s->stats.lost_writer_stalled.Add(s->stats.Unaccounted());
  WriteStats(s);
  EndStop(s);  // done already by the writer's end (SessionEnded), unless it stalled
  lock.lock();
  if (!finished) return;  // its thread may still run: never freed
  if (lifecycle_.AwaitIdle(budget.RemainingMs())) {
    delete s;
  } else {
    std::lock_guard<std::mutex> retired(retired_mutex_);
    retired_.push_back(s);
  }
}

bool Agent::StopFromWriter(Session* s, StopCause cause) {
  Lock lock(transition_, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // a start, stop or VM death is deciding: asked again next poll
  if (session() != s || !Active(lifecycle_.phase())) return false;  // another transition ends it
  // Disabling events needs a thread the JVM knows: the writer is one while it resolves loads,
  // else it attaches for this.
  JNIEnv* env = nullptr;
  const bool attach_here = vm_->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK;
  if (attach_here) {
    char name[] = "jitdumpagent writer";
    JavaVMAttachArgs args{JNI_VERSION_1_6, name, nullptr};
    if (vm_->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) return false;
  }
  const jvmtiError disabled = DisableEvents(jvmti_);
  if (attach_here) vm_->DetachCurrentThread();
  if (disabled != JVMTI_ERROR_NONE) {
    Log(LogLevel::kWarn, "disabling the JVMTI events failed (error %d); the session stops all the same", disabled);
  }
  if (cause == StopCause::kStopAfter) {
    Log(LogLevel::kInfo, "stop_after=%u s has passed: stopping the session writing %s", s->options.stop_after_s,
        PrintablePath(s->writer.dump_path()).c_str());
  }
  AwaitQuiet(*s, WaitBudget());
  s->stats.stop_cause.store(static_cast<int>(cause));
  return lifecycle_.BeginStop();
}

void Agent::EndStop(Session* s) { (void)lifecycle_.EndStop(s, [] { ReleaseProcess(); }); }

void Agent::SessionEnded(Session* s) {
  // A session that stopped on its own writes its stats here; the thread that stops one writes
  // them itself (StopActive), and so does Agent_OnUnload at VM death, from the JVM's thread.
  if (!s->freed_by_stopper.load() && lifecycle_.phase() == Phase::kStopping) WriteStats(s);
  EndStop(s);
  if (s->freed_by_stopper.load()) return;  // the stopper joins this thread and frees the session
  if (lifecycle_.session() == s) return;   // VM death closed the agent: the session stays
  // A stop of its own (stop_after=, a deleted dump): nobody joins this thread. The session goes
  // once no callback can reach it; this thread touches nothing of it afterwards.
  s->writer.DetachThread();
  if (lifecycle_.AwaitIdle(1000)) {
    delete s;
  } else {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    retired_.push_back(s);
  }
}

void Agent::VMDeath() noexcept {
  try {
    if (!exit_budget_) exit_budget_.emplace();
    const WaitBudget& budget = *exit_budget_;
    Lock lock(transition_, std::defer_lock);
    (void)lock.try_lock_for(milliseconds(budget.RemainingMs()));  // stuck past the budget: go on without
    Phase phase = lifecycle_.phase();
    if (phase == Phase::kStopping) {
      // A stop under way finishes first (within the budget), or VM death closes the agent with it.
      if (lock.owns_lock()) lock.unlock();
      (void)lifecycle_.AwaitPhaseOtherThan(Phase::kStopping, budget.RemainingMs());
      (void)lock.try_lock_for(milliseconds(budget.RemainingMs()));
      phase = lifecycle_.phase();
    }
    if (Active(phase)) {
      Session* s = session();
      s->stats.stop_cause.store(static_cast<int>(StopCause::kVmDeath));
      HandleVMDeath(*s, budget);  // kDying, then kDead
    } else {
      (void)lifecycle_.CloseJvm(budget.RemainingMs());  // dormant or a stop unfinished: kClosed
    }
  } catch (...) {
  }
}

void Agent::Unload() noexcept {
  try {
    if (!exit_budget_) exit_budget_.emplace();
    const WaitBudget& budget = *exit_budget_;
    Lock lock(transition_, std::defer_lock);
    (void)lock.try_lock_for(milliseconds(budget.RemainingMs()));
    Session* s = session();
    if (s == nullptr) {
      (void)lifecycle_.Close();
      return;
    }
    if (lifecycle_.closed() && s->writer.finished()) return;  // Agent_OnUnload of another load
    if (!lifecycle_.closed()) {
      // VMDeath (just before, on this thread) replayed the stubs; events are disabled now, but a
      // callback HotSpot began may still come: wait for quiet, then refuse events.
      AwaitQuiet(*s, budget);
      (void)lifecycle_.Close();
    }
    // Let callbacks already inside the agent finish queueing their events (bounded wait).
    (void)lifecycle_.AwaitIdle(budget.RemainingMs());
    s->writer.Finish(MonotonicNanos(), budget.RemainingMs());
    // A writer stuck in a write (a hung mount) still holds records nobody will write: each
    // counts as lost to the stall, so the stats still account for every code blob.
    if (!s->writer.finished()) s->stats.lost_writer_stalled.Add(s->stats.Unaccounted());
    WriteStats(s);
    ReleaseProcess();  // the claim's descriptor too
  } catch (...) {
  }
}

jint OnLoad(JavaVM* vm, char* options) noexcept { return TheAgent().Load(vm, options, /*attach=*/false); }

jint OnAttach(JavaVM* vm, char* options) noexcept { return TheAgent().Load(vm, options, /*attach=*/true); }

void OnUnload(JavaVM*) noexcept { TheAgent().Unload(); }

}  // namespace jitdump_agent
