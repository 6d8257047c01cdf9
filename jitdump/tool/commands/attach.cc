// `jitdump attach [--agent PATH] [--force] PID [OPTIONS]`: loads the agent into a running JVM
// (scripts/bin/attach, installed as jitdump-attach, and perf-java -p call it). jvm_attach.h talks
// to the JVM; this file decides whether to, and says what happened.
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "jitdump/format/text.h"
#include "jitdump/tool/agent_location.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/jvm_attach.h"
#include "jitdump/tool/proc_info.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump attach [--agent PATH] [--force] [--timeout SECONDS] [--jattach PATH] PID [OPTIONS]\n"
    "       jitdump attach [--agent PATH] [--timeout SECONDS] [--jattach PATH] PID stop\n"
    "Loads libjitdumpagent into the running JVM PID (late attach) with the agent's OPTIONS\n"
    "(e.g. \"dir=/tmp/jit,perfmap=on,stop_after=600\"; `help` lists them), starting a session: the\n"
    "agent replays the code compiled so far (JVMTI GenerateEvents), then writes new code as it is\n"
    "compiled. `stop` ends the running session: the agent disables its events, closes the dump\n"
    "with its CLOSE record and ends its thread, leaving no thread or descriptor of its own in the\n"
    "JVM; a later attach with options starts a new session (the library stays loaded: a JVM never\n"
    "unloads an agent).\n"
    "  PID        the JVM's pid as seen here (a host pid works for a JVM in a container; --agent\n"
    "             then names the library's path inside the container)\n"
    "  --agent    the library (default: `jitdump agent-path`: $JITDUMPAGENT_LIB, else the agent\n"
    "             installed with this tool, or the build tree's)\n"
    "  --force    load even when an agent already runs in the JVM (it keeps its options and\n"
    "             says so on the JVM's stderr)\n"
    "  --timeout  give up after SECONDS (default 120; a JVM still starting, not yet in its JVMTI\n"
    "             live phase, is sent the load again every 200 ms until then)\n"
    "  --jattach  the jattach binary (default /usr/bin/jattach, Debian's package jattach)\n"
    "How: through jattach, which speaks HotSpot's attach protocol itself with the JVM's user\n"
    "and namespaces. No jcmd or other program of the JVM's JDK runs, so the host needs no JDK;\n"
    "run as root, jattach gets no terminal, no environment but PATH, and none of root's groups.\n"
    "exit status: 0 the agent writes a dump (or already did, for a load without options), or\n"
    "with stop: no session runs any more; 1 nothing will be written for this load (refused\n"
    "options or directory, options of a running session, attach failed), or the session did\n"
    "not stop; 2 usage error\n";

constexpr OptionSpec kOptions[] = {
    {"--agent", "PATH"}, {"--force", ""}, {"--timeout", "SECONDS"}, {"--jattach", "PATH"}};

int Fail(const std::string& message) {
  std::fprintf(stderr, "jitdump-attach: %s\n", message.c_str());
  return kExitInvalid;
}

// Messages carry the name of the command users run (jitdump-attach, which perf-java -p runs too).
void Say(std::FILE* to, const std::string& message) { std::fprintf(to, "jitdump-attach: %s\n", message.c_str()); }

// The JVM's reply for the user: escaped, each line indented (the JVM or whatever listens on
// its socket chose those bytes).
std::string Shown(const std::string& output) {
  std::string out;
  size_t begin = 0;
  while (begin < output.size()) {
    size_t end = output.find('\n', begin);
    if (end == std::string::npos) end = output.size();
    if (end > begin) out += "  " + Printable(std::string_view(output).substr(begin, end - begin)) + "\n";
    begin = end + 1;
  }
  return out;
}

// `jitdump attach PID stop`: ends the running session and checks that nothing of it is left.
int Stop(uint32_t pid, const std::string& jattach, const std::string& agent, int timeout_s, bool same_mount_ns) {
  const std::string who = std::to_string(pid);
  const std::string dump = MappedDump(pid);
  if (dump.empty()) {
    Say(stdout, MapsAgentLibrary(pid) ? "libjitdumpagent in " + who + " runs no session (it is dormant): nothing to stop"
                                      : "libjitdumpagent is not loaded in " + who + ": nothing to stop");
    return kExitOk;
  }
  const AttachReply reply = SendLoad(jattach, pid, agent, "stop", timeout_s * 1000);
  if (!reply.started) return Fail(reply.error);
  if (!Loaded(reply)) {
    std::fputs(Shown(reply.output).c_str(), stderr);
    if (reply.timed_out) return Fail("the JVM did not answer within " + std::to_string(timeout_s) + " s (jattach stopped)");
    return Fail(reply.error.empty() ? "the stop did not reach the agent (the JVM's answer is above)" : reply.error);
  }
  // The agent answers once its writer has closed the dump (within its 5 s budget); its thread
  // leaves /proc a moment later.
  for (int i = 0; i < 50; ++i) {
    if (MappedDump(pid).empty() && !HasThreadNamed(pid, "jitdump-writer") &&
        (!same_mount_ns || !HasOpenFile(pid, dump))) {
      Say(stdout, "stopped: " + Printable(dump) + " is closed; no thread or descriptor of the agent is left in " + who +
                      " (the library stays mapped, dormant, until a later attach with options)");
      return kExitOk;
    }
    ::usleep(100000);
  }
  return Fail("the agent in " + who + " did not stop within 5 s: its session still writes " + Printable(dump) +
              " (a hung disk? the JVM's stderr may say why)");
}

// Whether HotSpot refused the load because it has not reached the JVMTI live phase yet (a JVM
// attached to within its first moments, before VMInit: its attach listener already answers).
bool NotLiveYet(const AttachReply& reply) {
  return reply.started && !reply.timed_out && !Loaded(reply) &&
         reply.output.find("only permitted in the live phase") != std::string::npos;
}

// Sends the load; while the JVM answers that it is still starting, sends it again every 200 ms
// until `timeout_s` has passed since the first. Nothing was loaded by a refused load, so the
// next one is the first the JVM sees.
AttachReply LoadWhenLive(const std::string& jattach, uint32_t pid, const std::string& agent,
                         const std::string& options, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  AttachReply reply = SendLoad(jattach, pid, agent, options, timeout_s * 1000);
  bool said = false;
  while (NotLiveYet(reply)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 200) break;
    if (!said) {
      Say(stdout, "the JVM " + std::to_string(pid) + " is still starting (not yet in its live phase): loading the "
                  "agent as soon as it is");
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    reply = SendLoad(jattach, pid, agent, options, static_cast<int>(left.count()) - 200);
  }
  return reply;
}

int Attach(const Invocation& in) {
  uint32_t pid = 0;
  const std::string& pid_text = in.operands[0];
  const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc() || end != pid_text.data() + pid_text.size() || pid == 0) {
    return Fail("not a pid: " + Printable(pid_text));
  }
  const std::string options = in.operands.size() > 1 ? in.operands[1] : "";
  // HotSpot's attach protocol carries arguments of at most 1024 bytes.
  if (options.size() > 1000) return Fail("the option string is longer than 1000 bytes (use config=FILE)");
  std::string agent;
  if (const std::string* a = in.Value("--agent")) {
    agent = *a;
  } else if (const AgentLocation located = LocateAgent(); !located.path.empty()) {
    agent = located.path;
  } else {
    return Fail("no agent library found (" + located.why + "); give it with --agent PATH or set JITDUMPAGENT_LIB");
  }
  const std::string jattach = in.Value("--jattach") ? *in.Value("--jattach") : kDefaultJattach;
  int timeout_s = 120;
  if (const std::string* t = in.Value("--timeout")) {
    const auto [tend, tec] = std::from_chars(t->data(), t->data() + t->size(), timeout_s);
    if (tec != std::errc() || tend != t->data() + t->size() || timeout_s < 1 || timeout_s > 3600) {
      return in.UsageError("attach: --timeout wants 1 to 3600 seconds");
    }
  }

  ProcessCredentials target;
  std::string error;
  if (!ReadCredentials(pid, &target, &error)) return Fail(error);
  const uid_t me = ::geteuid();
  if (me != 0 && me != target.euid) {
    return Fail("process " + std::to_string(pid) + " belongs to uid " + std::to_string(target.euid) +
                ": run this as that user or as root");
  }
  if (!MapsLibjvm(pid)) return Fail("process " + std::to_string(pid) + " is not a HotSpot JVM (no libjvm.so in its maps)");
  // The JVM dlopen()s the path in its own mount namespace: it must be absolute.
  if (agent.empty() || agent[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return Fail("cannot make the agent path absolute");
    agent = std::string(cwd) + "/" + agent;
  }
  struct stat st {};
  const bool same_mount_ns = SameNamespace(pid, "mnt");
  if (same_mount_ns && (::stat(agent.c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
    return Fail("no agent library at " + Printable(agent) + " (build it, or pass --agent / set JITDUMPAGENT_LIB)");
  }
  if (!same_mount_ns &&
      (::stat(("/proc/" + std::to_string(pid) + "/root" + agent).c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
    return Fail("the JVM runs in another mount namespace and has no " + Printable(agent) +
                "; pass --agent with the path inside it");
  }

  if (options == "stop") return Stop(pid, jattach, agent, timeout_s, same_mount_ns);
  bool dump_deleted = false;
  std::string dump_before = MappedDump(pid, &dump_deleted);
  const bool force = in.Flag("--force");
  if (!dump_before.empty() && dump_deleted) {
    // The agent stops a session whose dump was deleted on its own (within a second); a load with
    // options that comes first replaces it.
    Say(stdout, "the running session's dump " + Printable(dump_before) + " was deleted; the agent replaces that "
                "session with a new one");
    dump_before.clear();
  } else if (!dump_before.empty() && !force) {
    Say(stdout, "libjitdumpagent already runs in " + std::to_string(pid) + ", writing " + Printable(dump_before));
    if (!options.empty()) {
      // A running session keeps its options: a second load changes nothing.
      return Fail("your options '" + Printable(options) +
                  "' were not applied: the running session keeps the options it started with; stop it first "
                  "(jitdump-attach " + std::to_string(pid) + " stop), then attach with your options");
    }
    return kExitOk;
  }
  if (dump_before.empty() && MapsAgentLibrary(pid)) {
    // A session that stopped (or a load that disabled itself: a typo, an unusable dir=) left the
    // library dormant: this load starts a new session.
    Say(stdout, "libjitdumpagent in " + std::to_string(pid) + " is loaded but runs no session (an earlier one "
                "stopped, or a load disabled itself: the JVM's stderr says which); starting a new session");
  }

  const AttachReply reply = LoadWhenLive(jattach, pid, agent, options, timeout_s);
  if (!reply.started) return Fail(reply.error);
  if (!Loaded(reply)) {
    std::fputs(Shown(reply.output).c_str(), stderr);
    if (reply.timed_out) return Fail("the JVM did not answer within " + std::to_string(timeout_s) + " s (jattach stopped)");
    if (!reply.error.empty()) return Fail(reply.error);
    if (NotLiveYet(reply)) {
      return Fail("the JVM was still starting (not in its JVMTI live phase) after " + std::to_string(timeout_s) +
                  " s: attach again once it runs, or give a longer --timeout");
    }
    if (reply.output.find("Dynamic agent loading is not enabled") != std::string::npos) {
      return Fail("the JVM refuses dynamic agents (-XX:-EnableDynamicAgentLoading): restart it with -agentpath:" +
                  Printable(agent) + " or -XX:+EnableDynamicAgentLoading");
    }
    if (reply.return_code && *reply.return_code != 0) {
      // Agent_OnAttach returns an error when the agent disables itself.
      return Fail("the agent did not start (return code " + std::to_string(*reply.return_code) +
                  "): nothing will be written. The JVM's stderr says why (bad options, an unusable dir=, ...); fix "
                  "that and attach again");
    }
    if (reply.response_code == 0) {
      return Fail("the JVM did not load " + Printable(agent) + " (its answer is above): nothing will be written");
    }
    if (!reply.response_code) {
      if (const int64_t owner = ForeignAttachSocketOwner(pid, target); owner >= 0) {
        return Fail("/tmp/" + AttachSocketName(target) + " (in the JVM's mount namespace) belongs to uid " + std::to_string(owner) +
                    ", not to the JVM's user (uid " + std::to_string(target.euid) +
                    "): a process that had this pid before was killed and left it (or that user put it there), "
                    "and the JVM cannot replace it in the sticky /tmp, so no attach reaches the JVM. Remove it "
                    "(as root: rm " +
                    AttachSocketPath(pid, target) + ") and attach again");
      }
    }
    return Fail("the attach failed (jattach exit " + std::to_string(reply.exit_status) + ", response code " +
                (reply.response_code ? std::to_string(*reply.response_code) : std::string("none")) + ")");
  }
  if (!dump_before.empty()) {
    return Fail("libjitdumpagent already ran in " + std::to_string(pid) + " (writing " + Printable(dump_before) +
                "): this load (--force) changed nothing and its options were not applied (the JVM's stderr has the "
                "agent's warning); stop the session first (jitdump-attach " + std::to_string(pid) + " stop)");
  }

  // Confirm that the dump marker appeared (an agent of another version may return 0 although it
  // disabled itself, and the marker mapping fails on a noexec mount).
  std::string dump;
  for (int i = 0; i < 20 && dump.empty(); ++i) {
    dump = MappedDump(pid);
    if (dump.empty()) ::usleep(100000);
  }
  if (dump.empty()) {
    if (options.find("help") != std::string::npos) {
      Say(stdout, "the help text went to the JVM's stderr");
      return kExitOk;
    }
    return Fail("the agent loaded but writes no dump: read the JVM's stderr (bad options or an unwritable dir=?)");
  }
  Say(stdout, "writing " + Printable(dump) + " (inside the JVM's mount namespace)");

  const int version = JdkFeatureVersion(pid);
  if (version >= 21 && !HasJvmFlag(pid, "-XX:+EnableDynamicAgentLoading")) {
    Say(stderr, "note: JDK " + std::to_string(version) +
                    " printed a 'dynamically loaded agent' warning (JEP 451) on the JVM's stderr; start it with "
                    "-XX:+EnableDynamicAgentLoading to allow this quietly, or load the agent with -agentpath");
  }
  if (!HasJvmFlag(pid, "-XX:+DebugNonSafepoints")) {
    Say(stderr, "note: code compiled before the attach has coarse line information; start JVMs with "
                "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints for full detail");
  }
  return kExitOk;
}

}  // namespace

extern const Command kAttachCommand{
    .name = "attach",
    .synopsis = "attach PID [OPTIONS]",
    .summary = "load the agent into a running JVM (through jattach)",
    .usage = kUsage,
    .json = JsonMode::kNone,
    .min_operands = 1,
    .max_operands = 2,
    .operands = "PID and at most one OPTIONS string",
    .options = kOptions,
    .run = Attach,
};

}  // namespace jitdump::tool
