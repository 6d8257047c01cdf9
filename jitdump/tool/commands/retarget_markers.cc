// `jitdump retarget-markers IN OUT --marker PID=PATH...`: a copy of a perf recording in which
// the jitdump markers (the mmap of jit-<N>.dump each JVM's agent makes) of the given processes
// name another file. scripts/bin/collect points the markers of JVMs that ran in containers at the
// host copies of their dumps, so that `perf inject --jit` finds them (perf 6.1 ignores the
// marker of an exited JVM of another pid namespace), and hides the markers of processes nobody
// asked about. The copy is otherwise the recording as it was (jitdump/perfdata/rewriter.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "jitdump/perfdata/rewriter.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump retarget-markers [--json] IN OUT --marker PID=PATH [--marker PID=PATH ...]\n"
    "Copies the perf recording IN (a perf.data file, -z too, or a saved stream) to OUT with the jitdump\n"
    "markers of each PID (its mmaps of a file named jit-<N>.dump) naming PATH instead. Every other\n"
    "record is copied as it is; COMPRESSED records (perf record -z) are written decompressed.\n"
    "  --marker PID=PATH   the new file name for PID's markers (repeatable)\n"
    "  --json              what was renamed, as JSON\n"
    "exit status: 0 written, 2 usage error, unreadable or damaged IN, or OUT not written\n";

constexpr OptionSpec kOptions[] = {{"--marker", "PID=PATH", true}};

// perf's rule for a jitdump file name: "jit-", digits, ".dump" (and " (deleted)" after it).
bool IsMarker(std::string_view path) {
  while (path.size() > 10 && path.substr(path.size() - 10) == " (deleted)") path.remove_suffix(10);
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.size() < 10 || base.substr(0, 4) != "jit-" || base.substr(base.size() - 5) != ".dump") return false;
  base = base.substr(4, base.size() - 9);
  return !base.empty() && base.find_first_not_of("0123456789") == std::string_view::npos;
}

int RunRetarget(const Invocation& in) {
  std::map<uint32_t, std::string> targets;
  for (const std::string& spec : in.Values("--marker")) {
    const size_t eq = spec.find('=');
    const std::string pid = spec.substr(0, eq);
    if (eq == std::string::npos || pid.empty() || pid.size() > 10 ||
        pid.find_first_not_of("0123456789") != std::string::npos || eq + 1 == spec.size()) {
      return in.UsageError("retarget-markers: --marker takes PID=PATH, not '" + Shown(spec) + "'");
    }
    targets[static_cast<uint32_t>(std::stoull(pid))] = spec.substr(eq + 1);
  }
  if (targets.empty()) return in.UsageError("retarget-markers: give at least one --marker PID=PATH");
  const std::string& input = in.operands[0];
  const std::string& output = in.operands[1];
  const int in_fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (in_fd < 0) {
    std::fprintf(stderr, "jitdump: %s: %s\n", Shown(input).c_str(), std::strerror(errno));
    return kExitUsage;
  }
  const int out_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (out_fd < 0) {
    std::fprintf(stderr, "jitdump: cannot write %s: %s\n", Shown(output).c_str(), std::strerror(errno));
    ::close(in_fd);
    return kExitUsage;
  }
  Json renamed = Json::array();
  const perfdata::RenameMmap rename = [&](uint32_t pid, std::string_view name) -> std::optional<std::string> {
    const auto it = targets.find(pid);
    if (it == targets.end() || !IsMarker(name)) return std::nullopt;
    renamed.push_back({{"pid", pid}, {"from", std::string(name)}, {"to", it->second}});
    return it->second;
  };
  perfdata::RewriteStats stats;
  std::string error;
  const bool ok = perfdata::RewriteMmapNames(in_fd, out_fd, rename, &stats, &error);
  ::close(in_fd);
  if (::close(out_fd) != 0 && ok) error = std::string("closing the copy: ") + std::strerror(errno);
  if (!ok || !error.empty()) {
    ::unlink(output.c_str());
    std::fprintf(stderr, "jitdump: %s: %s (nothing written)\n", Shown(input).c_str(), Shown(error).c_str());
    return kExitUsage;
  }
  if (in.json) {
    PrintJson({{"input", input},
               {"output", output},
               {"records", stats.records},
               {"decompressed", stats.decompressed},
               {"renamed", std::move(renamed)}});
  } else {
    for (const Json& r : renamed) {
      std::printf("pid %u: %s -> %s\n", r["pid"].get<uint32_t>(), Shown(r["from"].get<std::string>()).c_str(),
                  Shown(r["to"].get<std::string>()).c_str());
    }
  }
  return kExitOk;
}

}  // namespace

extern const Command kRetargetMarkersCommand{
    .name = "retarget-markers",
    .synopsis = "retarget-markers IN OUT --marker PID=PATH",
    .summary = "copy a perf recording with some JVMs' jitdump markers naming other files (collect)",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .min_operands = 2,
    .max_operands = 2,
    .operands = "IN and OUT",
    .options = kOptions,
    .run = RunRetarget,
};

}  // namespace jitdump::tool
