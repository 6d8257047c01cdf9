// `jitdump run-dir new|check|take-dumps`: perf-java's run directory, made and checked here
// rather than in shell (run_dir.h has the rules).
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "jitdump/format/text.h"
#include "jitdump/report/perf_data_source.h"
#include "jitdump/report/process_map.h"
#include "jitdump/write/safe_file.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/proc_info.h"
#include "jitdump/tool/run_dir.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump run-dir new [--jvm PID] DIR\n"
    "       jitdump run-dir check DIR\n"
    "       jitdump run-dir take-dumps DIR\n"
    "perf-java's run directory (what perf-java runs; also for scripts that record like it).\n"
    "  new         create DIR and DIR/jit, print DIR's canonical path. DIR must not exist, and\n"
    "              every directory above it must be changeable only by you or root (so nobody\n"
    "              can swap it for a symlink later). --jvm PID: as root, for a JVM of another\n"
    "              user, DIR/jit is handed to that user (its agent writes the dump there) and\n"
    "              must be reachable by it\n"
    "  check       DIR is an existing run directory you can trust (a real directory, in a\n"
    "              trusted ancestry); print its canonical path\n"
    "  take-dumps  before perf inject (which writes beside the dumps it reads): when DIR/jit\n"
    "              belongs to another user, move it to DIR/jit-uid<UID> and make DIR/jit anew\n"
    "              with copies of its dumps; then refuse (exit 1) if DIR/perf.data names a dump\n"
    "              in any directory another user could change (read from perf.data itself:\n"
    "              perf is not run)\n"
    "exit status: 0 done, 1 refused (the reason on stderr), 2 usage error\n";

constexpr OptionSpec kOptions[] = {{"--jvm", "PID"}};

int New(const Invocation& in, const std::string& dir) {
  bool for_jvm = false;
  ProcessCredentials jvm;
  if (const std::string* pid_text = in.Value("--jvm")) {
    uint32_t pid = 0;
    const auto [end, ec] = std::from_chars(pid_text->data(), pid_text->data() + pid_text->size(), pid);
    if (ec != std::errc() || end != pid_text->data() + pid_text->size() || pid == 0) {
      return in.UsageError("run-dir: --jvm wants a pid, not '" + Shown(*pid_text) + "'");
    }
    std::string error;
    if (!ReadCredentials(pid, &jvm, &error)) {
      std::fprintf(stderr, "jitdump run-dir: %s\n", error.c_str());
      return kExitInvalid;
    }
    for_jvm = true;
  }
  NewRun run;
  std::string error;
  if (!CreateRunDirectory(dir, for_jvm, jvm.euid, jvm.egid, jvm.groups, &run, &error)) {
    std::fprintf(stderr, "jitdump run-dir: %s\n", error.c_str());
    return kExitInvalid;
  }
  ::close(run.fd);
  std::printf("%s\n", run.path.c_str());
  return kExitOk;
}

// Every dump the recording's markers name must sit in a directory only we (or root) can change:
// perf inject writes its jitted-<pid>-<n>.so files there, through whatever is at those names.
bool MarkersTrusted(const std::string& run_path) {
  report::ProcessMap processes;
  std::string error;
  std::unique_ptr<report::PerfDataSource> recording = report::PerfDataSource::Open(run_path + "/perf.data", &error);
  if (!recording) {
    std::fprintf(stderr, "jitdump run-dir: %s\n", Printable(error).c_str());
    return false;
  }
  recording->ReadSideBand(processes);
  bool ok = true;
  std::vector<std::string> seen;
  for (const report::DumpMarker& marker : processes.markers()) {
    const std::string dir = DirectoryOf(marker.path);
    bool known = false;
    for (const std::string& s : seen) known = known || s == dir;
    if (known) continue;
    seen.push_back(dir);
    const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;  // gone: perf inject cannot write there either
    const std::string why = UntrustedAncestry(fd, ::geteuid(), PathOf(fd));
    ::close(fd);
    if (!why.empty()) {
      std::fprintf(stderr,
                   "jitdump run-dir: perf inject would write its jitted ELF images beside %s, and %s: refused. "
                   "jitdump report's outputs (folded.txt, srcline.txt, the flame graph, pprof) have the same Java "
                   "frames without perf inject\n",
                   Printable(marker.path).c_str(), why.c_str());
      ok = false;
    }
  }
  return ok;
}

int TakeDumpsCommand(const std::string& dir) {
  NewRun run;
  std::string error;
  if (!OpenRunDirectory(dir, &run, &error)) {
    std::fprintf(stderr, "jitdump run-dir: %s\n", error.c_str());
    return kExitInvalid;
  }
  std::vector<std::string> notes;
  const bool taken = TakeDumps(run.fd, run.path, &notes, &error);
  ::close(run.fd);
  for (const std::string& note : notes) std::fprintf(stderr, "jitdump run-dir: %s\n", Printable(note).c_str());
  if (!taken) {
    std::fprintf(stderr, "jitdump run-dir: %s\n", error.c_str());
    return kExitInvalid;
  }
  if (::access((run.path + "/perf.data").c_str(), F_OK) == 0 && !MarkersTrusted(run.path)) return kExitInvalid;
  return kExitOk;
}

int RunDir(const Invocation& in) {
  const std::string& action = in.operands[0];
  const std::string& dir = in.operands[1];
  if (action == "new") return New(in, dir);
  if (action != "check" && action != "take-dumps") return in.UsageError("run-dir: unknown action '" + Shown(action) + "'");
  if (in.Value("--jvm") != nullptr) return in.UsageError("run-dir: --jvm goes with new");
  if (action == "take-dumps") return TakeDumpsCommand(dir);
  NewRun run;
  std::string error;
  if (!OpenRunDirectory(dir, &run, &error)) {
    std::fprintf(stderr, "jitdump run-dir: %s\n", error.c_str());
    return kExitInvalid;
  }
  ::close(run.fd);
  std::printf("%s\n", run.path.c_str());
  return kExitOk;
}

}  // namespace

extern const Command kRunDirCommand{
    .name = "run-dir",
    .synopsis = "run-dir ACTION DIR",
    .summary = "perf-java's run directory: new, check, take-dumps (before perf inject)",
    .usage = kUsage,
    .json = JsonMode::kNone,
    .min_operands = 2,
    .max_operands = 2,
    .operands = "an action (new, check, take-dumps) and DIR",
    .options = kOptions,
    .run = RunDir,
};

}  // namespace jitdump::tool
