// Sending a command to a running HotSpot JVM through its attach mechanism, as `jitdump attach`
// does to load the agent: through Debian's jattach (/usr/bin/jattach), which speaks the protocol
// itself (the .attach_pid<pid> trigger, SIGQUIT, the /tmp/.java_pid<pid> socket), takes the
// target's effective uid and gid and enters its namespaces. No program of the target's JDK (its
// jcmd) runs, so a host needs no JDK and a JVM started from a JDK its user controls cannot run
// anything of that user's in root's session.
//
// Run as root for another user's JVM, jattach gets nothing of root's session: a new session
// without a controlling terminal, /dev/null as input, its output through a pipe read here (at
// most kMaxReplyBytes, escaped before anything shows it), an environment of PATH and LC_ALL
// only, no supplementary groups (so while it acts as the target's user it has none of root's
// groups either), and a deadline.
//
// A second load of the same library into the same JVM calls its Agent_OnAttach again with the
// new options: SendLoad is the one entry point for every option string sent to a running agent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::tool {

inline constexpr char kDefaultJattach[] = "/usr/bin/jattach";
inline constexpr size_t kMaxReplyBytes = 64 << 10;

struct AttachReply {
  bool started = false;     // jattach could be run at all (else `error` says why)
  bool timed_out = false;   // killed at the deadline
  int exit_status = -1;     // jattach's exit status (-1: killed by a signal)
  std::string output;       // what it printed (stdout and stderr), at most kMaxReplyBytes
  std::optional<int> response_code;  // "JVM response code = N": the attach operation's result
  std::optional<int> return_code;    // "return code: N": Agent_OnAttach's result (a load only)
  std::string error;
};

// Reads jattach's output into reply->response_code and reply->return_code.
void ParseJattachOutput(std::string_view output, AttachReply* reply);

// Whether the reply says the load ran Agent_OnAttach and it returned 0. A JDK 21+ that refuses
// the load (dynamic loading disabled, a library that cannot be opened) answers response code 0
// without a return code: not loaded.
bool Loaded(const AttachReply& reply);

// Runs `jattach PID ARGS...` as described above; waits at most `timeout_ms`.
AttachReply RunJattach(const std::string& jattach, uint32_t pid, const std::vector<std::string>& args, int timeout_ms);

// `load LIBRARY true OPTIONS`: loads (or, for a library already loaded, calls Agent_OnAttach of)
// the agent at the absolute path `library` with `options`.
AttachReply SendLoad(const std::string& jattach, uint32_t pid, const std::string& library, const std::string& options,
                     int timeout_ms);

}  // namespace jitdump::tool
