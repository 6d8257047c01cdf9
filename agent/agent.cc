// The agent's lifecycle (JVMTI glue): Agent_OnLoad / Agent_OnAttach set up the options, the
// JVMTI environment and its capabilities, the output files and the writer thread, then enable
// the events; Agent_OnUnload closes the output once callbacks have gone quiet and writes the
// stats. One agent per process, whatever loads it how often.
#include "agent/agent.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <jvmti.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "agent/agent_state.h"
#include "agent/callbacks.h"
#include "agent/clock.h"
#include "agent/config.h"
#include "agent/jvm_resolver.h"
#include "agent/jvm_version.h"
#include "agent/log.h"
#include "jitdump/safe_file.h"

namespace jitdump_agent {
namespace {

std::atomic<AgentState*> g_state{nullptr};
// One agent per process: the same library loaded twice (attach after -agentpath, or a second
// attach) shares these globals and must not create a second environment or a second dump.
std::atomic<bool> g_claimed{false};

// Reads a config file. Symlinks are followed (Kubernetes ConfigMap volumes are symlink farms),
// but only a regular file is read: O_NONBLOCK keeps a FIFO from stalling JVM start-up.
bool ReadSmallFile(const std::string& path, std::string* contents) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  char buf[4096];
  contents->clear();
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || contents->size() > (1u << 20)) break;
    contents->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

void WriteStats(AgentState* s) {
  if (s->options.stats.empty() || s->stats_written.exchange(true)) return;
  const std::string json = s->stats.ToJson(s->writer.dump_path(), s->writer.perfmap_path());
  if (s->options.stats == "stderr") {
    const std::string line = "jitdumpagent: stats: " + json;
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    return;
  }
  // Same rule as the dump: never through a symlink, never over another user's file.
  const std::string path = ExpandPid(s->options.stats, s->pid);
  // The file appears whole or not at all.
  int fd = -1;
  const jitdump::Status status =
      jitdump::CreateWithContents(path, O_WRONLY, s->options.mode, json.data(), json.size(), &fd);
  if (!status.ok()) {
    Log(LogLevel::kWarn, "cannot write stats to %s: %s", PrintablePath(path).c_str(), status.ToString().c_str());
    return;
  }
  ::close(fd);
}

// Whether loads may be resolved on the writer thread (see jvm_version.h).
bool ResolveInWriter(jvmtiEnv* jvmti, ResolveIn resolve) {
  if (resolve != ResolveIn::kAuto) return resolve == ResolveIn::kWriter;
  char* text = nullptr;
  if (jvmti->GetSystemProperty("java.vm.version", &text) != JVMTI_ERROR_NONE || text == nullptr) return false;
  const std::optional<JvmVersion> version = ParseJvmVersion(text);
  jvmti->Deallocate(reinterpret_cast<unsigned char*>(text));
  const bool safe = version && LooksUpStaleMethodIdsSafely(*version);
  if (!safe) Log(LogLevel::kInfo, "this JVM resolves stale method ids unsafely: looking up names inside callbacks");
  return safe;
}

enum class Mode { kOnLoad, kOnAttach };

jint Start(JavaVM* vm, const char* option_text, Mode mode) {
  Options options;
  const ParseResult parsed = LoadOptions(option_text != nullptr ? option_text : "",
                                         std::getenv(kOptionsEnvironmentVariable), ReadSmallFile, options);
  SetLogLevel(options.log);
  if (options.help) {
    const std::string& help = OptionsHelp();
    (void)!::write(STDERR_FILENO, help.data(), help.size());
    return JNI_OK;
  }
  if (!parsed.ok()) {
    for (const OptionError& error : parsed.errors) Log(LogLevel::kError, "%s", FormatOptionError(error).c_str());
    if (options.strict) {
      Log(LogLevel::kError, "strict: refusing to start");
      return JNI_ERR;
    }
    Log(LogLevel::kError, "the agent is disabled; the JVM runs on (add 'strict' to stop the JVM instead)");
    return JNI_OK;
  }
  const jint failure = options.strict ? JNI_ERR : JNI_OK;
  if (g_claimed.exchange(true)) {
    Log(LogLevel::kInfo, "already loaded in this JVM; ignoring the second load");
    return JNI_OK;
  }

  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK || jvmti == nullptr) {
    Log(LogLevel::kError, "this JVM offers no JVMTI 1.2 environment; the agent is disabled");
    g_claimed.store(false);
    return failure;
  }
  jvmtiCapabilities required{};
  required.can_generate_compiled_method_load_events = 1;
  if (jvmti->AddCapabilities(&required) != JVMTI_ERROR_NONE) {
    Log(LogLevel::kError, "the JVM refused can_generate_compiled_method_load_events; the agent is disabled");
    jvmti->DisposeEnvironment();
    g_claimed.store(false);
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
  AgentState* s = new (std::nothrow) AgentState(options);
  if (s == nullptr) {
    jvmti->DisposeEnvironment();
    g_claimed.store(false);
    return failure;
  }
  s->jvmti = jvmti;
  s->vm = vm;
  s->pid = static_cast<uint32_t>(::getpid());
  s->naming = new (std::nothrow) JvmtiLoadNaming(jvmti, s->options, lines, lines && options.lines, s->stats);
  if (s->naming == nullptr || !s->queue.lock_free()) {
    Log(LogLevel::kError, "cannot set up the record queue; the agent is disabled");
    jvmti->DisposeEnvironment();
    g_claimed.store(false);
    return failure;
  }
  if (ResolveInWriter(jvmti, options.resolve)) {
    // Null (no memory) leaves every load resolved in its callback.
    s->hand_off.SetResolver(new (std::nothrow) JvmResolver(vm, jvmti, s->options, lines, lines && options.lines,
                                                           s->stats));
  }
  if (!s->writer.Open(s->pid, MonotonicNanos())) {
    // Nothing to write to: stay out of the JVM's way entirely.
    jvmti->DisposeEnvironment();
    g_claimed.store(false);
    return failure;
  }
  {
    // The writer must never take process-directed signals (SIGTERM, SIGINT, SIGQUIT...) that
    // HotSpot expects to handle on its own threads: start it with everything blocked.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    s->writer.Start();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  g_state.store(s, std::memory_order_release);

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
