#include "jitdump/report/dump_locator.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>

namespace jitdump::report {

std::string SamePidSubdirectory(std::string_view path, uint32_t dump_pid) {
  const std::string pid = std::to_string(dump_pid);
  const std::string file = "/jit-" + pid + ".dump";
  if (path.size() <= file.size() || path.substr(path.size() - file.size()) != file) return "";
  path.remove_suffix(file.size());
  const std::string_view dir = path.substr(path.rfind('/') + 1);
  for (char n = '2'; n <= '9'; ++n) {
    if (dir == "jit-" + pid + "-" + n) return std::string(dir);
  }
  return "";
}

std::vector<std::string> DumpCandidates(const DumpMarker& marker, const std::vector<std::string>& dump_dirs) {
  std::vector<std::string> out;
  auto add = [&](std::string path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  };
  // The JVM that wrote into jit-<pid>-N/ found jit-<pid>.dump held by another JVM with its pid:
  // a flat jit-<pid>.dump in a --dumps directory is most likely that other JVM's, and its header
  // pid matches too, so the copy in the same-named subdirectory is tried before any flat name.
  const std::string subdirectory = SamePidSubdirectory(marker.path, marker.dump_pid);
  if (!subdirectory.empty()) {
    for (const std::string& dir : dump_dirs) {
      add(dir + "/" + subdirectory + "/jit-" + std::to_string(marker.dump_pid) + ".dump");
    }
  }
  for (const std::string& dir : dump_dirs) {
    add(dir + "/jit-" + std::to_string(marker.pid) + ".dump");
    add(dir + "/jit-" + std::to_string(marker.dump_pid) + ".dump");
  }
  add(marker.path);
  if (!marker.path.empty() && marker.path[0] == '/') add("/proc/" + std::to_string(marker.pid) + "/root" + marker.path);
  return out;
}

bool AcceptsDump(const DumpMarker& marker, uint32_t header_pid) {
  return header_pid == marker.dump_pid || header_pid == marker.pid;
}

namespace {

// "jit-1234-2" -> 1234: a subdirectory the agent writes a second JVM with pid 1234 into.
bool SamePidDirectoryName(std::string_view name, uint32_t* pid) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 2 != name.size() || name[dash + 1] < '2' || name[dash + 1] > '9') {
    return false;
  }
  return DumpFileName(std::string(name.substr(0, dash)) + ".dump", pid);
}

bool RegularFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// One directory's dumps by pid: jit-<pid>.dump first, then jit-<pid>-2/jit-<pid>.dump ... -9.
std::map<uint32_t, std::vector<std::string>> DumpsIn(const std::string& dir) {
  std::map<uint32_t, std::vector<std::string>> out;
  std::unique_ptr<DIR, int (*)(DIR*)> handle(opendir(dir.c_str()), closedir);
  if (!handle) return out;
  std::vector<std::string> names;  // sorted: the same choice whatever readdir's order
  while (const dirent* entry = readdir(handle.get())) names.emplace_back(entry->d_name);
  std::sort(names.begin(), names.end());
  std::map<uint32_t, std::string> flat;
  std::map<uint32_t, std::vector<std::string>> nested;  // one digit N: name order is N's order
  for (const std::string& name : names) {
    if (name.find(' ') != std::string::npos) continue;
    uint32_t pid;
    if (DumpFileName(name, &pid)) {
      flat.try_emplace(pid, dir + "/" + name);
    } else if (SamePidDirectoryName(name, &pid)) {
      std::string path = dir + "/" + name + "/jit-" + std::to_string(pid) + ".dump";
      if (RegularFile(path)) nested[pid].push_back(std::move(path));
    }
  }
  for (auto& [pid, path] : flat) out[pid].push_back(std::move(path));
  for (auto& [pid, paths] : nested) out[pid].insert(out[pid].end(), paths.begin(), paths.end());
  return out;
}

}  // namespace

std::vector<FoundDump> DumpsInDirectories(const std::vector<std::string>& dump_dirs) {
  std::map<uint32_t, FoundDump> found;
  for (const std::string& dir : dump_dirs) {
    for (auto& [pid, paths] : DumpsIn(dir)) {
      if (found.count(pid) != 0) continue;  // an earlier directory has this pid
      FoundDump& dump = found[pid];
      dump.pid = pid;
      dump.path = paths.front();
      dump.others.assign(paths.begin() + 1, paths.end());
    }
  }
  std::vector<FoundDump> out;
  for (auto& [pid, dump] : found) out.push_back(std::move(dump));
  return out;
}

}  // namespace jitdump::report
