// The agent's lifecycle (JVMTI glue): Agent_OnLoad / Agent_OnAttach set up the options, the
// JVMTI environment and its capabilities, the output files and the writer thread, then enable
// the events; Agent_OnUnload closes the output once callbacks have gone quiet and writes the
// stats. One agent per process, whatever loads it how often and from however many copies of
// the library (process_claim.h).
#include "agent/agent.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <jvmti.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "agent/agent_state.h"
#include "agent/callbacks.h"
#include "agent/clock.h"
#include "agent/config.h"
#include "agent/interpreter_layout.h"
#include "agent/jvm_method_source.h"
#include "agent/jvm_resolver.h"
#include "agent/jvm_version.h"
#include "agent/log.h"
#include "agent/process_claim.h"
#include "agent/vm_structs.h"
#include "jitdump/safe_file.h"

namespace jitdump_agent {
namespace {

std::atomic<AgentState*> g_state{nullptr};
// The option string the running agent was loaded with (written once, before g_state), so a
// second load of this copy can say whether its options differ.
std::string g_active_options;

void WriteStats(AgentState* s) {
  if (s->options.stats.empty() || s->stats_written.exchange(true)) return;
  const std::string json = s->stats.ToJson(s->writer.dump_path(), s->writer.perfmap_path());
  if (s->options.stats == "stderr") {
    const std::string line = "jitdumpagent: stats: " + json;
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    return;
  }
  const std::string path = ExpandPid(s->options.stats, s->pid);
  if (!s->stats_dir.is_open()) return;  // refused at start-up, with a message then
  // Same rules as the dump: in the directory held since start-up, never through a symlink,
  // never over another user's file or one written since this agent started (another JVM with
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
    return;
  }
  if (written != name) {
    Log(LogLevel::kWarn,
        "%s was written by another live process with the same pid (a JVM in another pid namespace sharing this "
        "directory?); wrote the stats to %s instead",
        PrintablePath(dir + name).c_str(), PrintablePath(dir + written).c_str());
  }
  ::close(fd);
}

// Holds the directory of stats=PATH from start-up on (stats are written at exit, when the path
// could lead elsewhere). Leaves it unopened, after a warning, when it cannot be used.
void HoldStatsDirectory(AgentState* s) {
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

// What a start-up that stops half-way must undo, on every path out: the JVMTI environment
// disposed and the process claim released, so that a later attach can start the agent.
class StartUndo {
 public:
  StartUndo() = default;
  ~StartUndo() {
    if (done_) return;
    if (jvmti_ != nullptr) jvmti_->DisposeEnvironment();
    ReleaseProcess();
  }
  StartUndo(const StartUndo&) = delete;
  StartUndo& operator=(const StartUndo&) = delete;
  void SetEnvironment(jvmtiEnv* jvmti) { jvmti_ = jvmti; }
  void Done() { done_ = true; }

 private:
  jvmtiEnv* jvmti_ = nullptr;
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
void SetUpMethodTable(AgentState& s) {
  const auto unavailable = [&s](const std::string& why) {
    s.stats.method_table_state.store(static_cast<int>(Stats::MethodTableState::kUnavailable),
                                     std::memory_order_relaxed);
    Log(LogLevel::kWarn, "interp=on: interpreted frames will not be named: %s; everything else is recorded as usual",
        why.c_str());
  };
  if (s.hand_off.resolver() == nullptr) {
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
  s.method_source = new (std::nothrow) JvmMethodSource(s.vm, s.jvmti, *decision.layout, s.stats);
  if (s.method_source == nullptr) {
    unavailable("out of memory");
    return;
  }
  s.writer.EnableMethodTable(*decision.layout, Printable(version, 200), s.method_source);
}

enum class Mode { kOnLoad, kOnAttach };

// A load while the agent already runs in this process: nothing changes. Says so at warn level
// when it asked for something else, since its options will not take effect.
void ExplainIgnoredLoad(Claim claim, const std::string& options) {
  const std::string shown = Printable(options, 200);
  if (claim == Claim::kHeldByAnotherCopy) {
    Log(LogLevel::kWarn,
        "another copy of libjitdumpagent already runs in this JVM; this copy (options '%s') stays inactive and "
        "touches no file. Load the agent once (are both -agentpath and JAVA_TOOL_OPTIONS naming it?)",
        shown.c_str());
    return;
  }
  const AgentState* s = State();
  if (options == g_active_options) {
    Log(LogLevel::kInfo, "already loaded in this JVM with the same options; ignoring the second load");
    return;
  }
  Log(LogLevel::kWarn,
      "already running in this JVM, writing %s with the options it was loaded with ('%s'); the options of this "
      "load ('%s') are ignored. A JVMTI agent cannot be unloaded or reconfigured: restart the JVM with the "
      "options you want",
      s != nullptr ? PrintablePath(s->writer.dump_path()).c_str() : "its dump",
      Printable(g_active_options, 200).c_str(), shown.c_str());
}

jint Start(JavaVM* vm, const char* option_text, Mode mode) {
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
  // `strict`. A late attach returns JNI_ERR, so `jcmd JVMTI.agent_load` reports a non-zero
  // return code (scripts/attach then says nothing will be written); the JVM runs on either way.
  const jint failure = options.strict || mode == Mode::kOnAttach ? JNI_ERR : JNI_OK;
  if (!parsed.ok()) {
    for (const OptionError& error : parsed.errors) Log(LogLevel::kError, "%s", FormatOptionError(error).c_str());
    if (options.strict) {
      Log(LogLevel::kError, "strict: refusing to start");
      return JNI_ERR;
    }
    Log(LogLevel::kError, "the agent is disabled; the JVM runs on (add 'strict' to stop the JVM instead)");
    return failure;
  }
  const Claim claim = ClaimProcess();
  if (claim != Claim::kClaimed) {
    ExplainIgnoredLoad(claim, option_string);
    return JNI_OK;  // the agent runs (another load's), and that load keeps the library mapped
  }
  StartUndo undo;  // from here on every early return disposes the environment and releases the claim

  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK || jvmti == nullptr) {
    Log(LogLevel::kError, "this JVM offers no JVMTI 1.2 environment; the agent is disabled");
    return failure;
  }
  undo.SetEnvironment(jvmti);
  jvmtiCapabilities required{};
  required.can_generate_compiled_method_load_events = 1;
  if (jvmti->AddCapabilities(&required) != JVMTI_ERROR_NONE) {
    Log(LogLevel::kError, "the JVM refused can_generate_compiled_method_load_events; the agent is disabled");
    return failure;
  }
  bool lines = options.lines || options.inline_info;
  if (lines) {
    jvmtiCapabilities line_caps{};
    line_caps.can_get_line_numbers = 1;
    line_caps.can_get_source_file_name = 1;
    jvmtiJlocationFormat format;
    if (jvmti->GetJLocationFormat(&format) != JVMTI_ERROR_NONE || format != JVMTI_JLOCATION_JVMBCI ||
        jvmti->AddCapabilities(&line_caps) != JVMTI_ERROR_NONE) {
      Log(LogLevel::kWarn, "this JVM offers no line numbers; writing the dump without source lines");
      lines = false;
    }
  }

  for (std::string* path : {&options.dir, &options.perfmap_dir}) *path = ExpandPid(*path, static_cast<uint32_t>(::getpid()));
  // Freed on every failure below (nothing outside reaches it before g_state is set).
  std::unique_ptr<AgentState> state(new (std::nothrow) AgentState(options));
  if (state == nullptr) {
    Log(LogLevel::kError, "out of memory while starting; the agent is disabled");
    return failure;
  }
  AgentState* s = state.get();
  s->jvmti = jvmti;
  s->vm = vm;
  s->pid = static_cast<uint32_t>(::getpid());
  s->naming = new (std::nothrow) JvmtiLoadNaming(jvmti, s->options, lines, lines && options.lines, s->stats);
  if (s->naming == nullptr || !s->queue.lock_free()) {
    Log(LogLevel::kError, "cannot set up the record queue; the agent is disabled");
    return failure;
  }
  if (ResolveInWriter(jvmti, options.resolve)) {
    // Null (no memory) leaves every load resolved in its callback.
    s->hand_off.SetResolver(new (std::nothrow) JvmResolver(vm, jvmti, s->options, lines, lines && options.lines,
                                                           s->stats));
  }
  if (options.interp) SetUpMethodTable(*s);
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  s->start_realtime_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  if (!s->writer.Open(s->pid, MonotonicNanos())) return failure;  // said why; nothing to write to
  HoldStatsDirectory(s);
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
  g_active_options = option_string;
  undo.Done();
  g_state.store(state.release(), std::memory_order_release);

  const jvmtiError error = EnableEvents(*s);
  if (error != JVMTI_ERROR_NONE) {
    Log(LogLevel::kError, "enabling JVMTI events failed (error %d); the agent is disabled", error);
    // The library may be unloaded after a failed attach: stop every callback from reaching us.
    jvmtiEventCallbacks none{};
    jvmti->SetEventCallbacks(&none, sizeof none);
    s->hand_off.Close();
    s->writer.Finish(MonotonicNanos(), 2000);
    if (mode == Mode::kOnAttach) return JNI_OK;  // keep the library mapped; nothing else runs
    return failure;
  }
  if (mode == Mode::kOnAttach) {
    s->hand_off.BeginDeferring();  // live already: no VMInit comes
    ReplayExistingCode(*s);
  }
  return JNI_OK;
}

}  // namespace

AgentState* State() { return g_state.load(std::memory_order_acquire); }

namespace {

uint64_t EventsSeen(const AgentState* s) {
  return s->stats.compiled_method_load.Get() + s->stats.dynamic_code_generated.Get() +
         s->stats.compiled_method_unload.Get();
}

// HotSpot checks that an event is enabled, builds its compile_info and only then calls us: an
// event the ServiceThread took up before the phase turned DEAD can reach a callback after
// Agent_OnUnload began (seen: one load in five javac runs). Before refusing events, wait until
// none has arrived and none is in flight for kQuietMs (at most kMaxWaitMs in all).
void AwaitQuiet(const AgentState* s) {
  constexpr int kQuietMs = 5;
  constexpr int kMaxWaitMs = 200;
  uint64_t seen = EventsSeen(s);
  for (int waited = 0, quiet = 0; waited < kMaxWaitMs && quiet < kQuietMs; ++waited) {
    ::usleep(1000);
    const uint64_t now = EventsSeen(s);
    const bool idle = now == seen && s->hand_off.in_flight() == 0;
    quiet = idle ? quiet + 1 : 0;
    seen = now;
  }
}

// Refuses further events, waits for callbacks in flight and closes the files.
void CloseOutput(AgentState* s) {
  if (s->hand_off.closed()) return;
  AwaitQuiet(s);
  if (!s->hand_off.Close()) return;
  // Let callbacks already inside the agent finish queueing their events (bounded wait).
  (void)s->hand_off.AwaitIdle(2000);
  s->writer.Finish(MonotonicNanos(), 5000);
}

}  // namespace

jint OnLoad(JavaVM* vm, char* options) noexcept {
  try {
    return Start(vm, options, Mode::kOnLoad);
  } catch (...) {
    Log(LogLevel::kError, "unexpected failure while starting; the agent is disabled");
    return JNI_OK;
  }
}

jint OnAttach(JavaVM* vm, char* options) noexcept {
  try {
    return Start(vm, options, Mode::kOnAttach);
  } catch (...) {
    Log(LogLevel::kError, "unexpected failure while attaching; the agent is disabled");
    return JNI_OK;
  }
}

void OnUnload(JavaVM*) noexcept {
  try {
    AgentState* s = State();
    if (s == nullptr) return;
    CloseOutput(s);  // VMDeath (just before, on this thread) replayed the stubs; now close
    (void)s->hand_off.AwaitIdle(1000);
    // A writer stuck in a write (a hung mount) still holds records nobody will write: each
    // counts as lost to the stall, so the stats still account for every code blob.
    if (!s->writer.finished()) s->stats.lost_writer_stalled.Add(s->stats.Unaccounted());
    WriteStats(s);
  } catch (...) {
  }
}

}  // namespace jitdump_agent
