#include "jitdump/report/dump_locator.h"

#include <dirent.h>

#include <algorithm>
#include <memory>
#include <set>

namespace jitdump::report {

std::vector<std::string> DumpCandidates(const DumpMarker& marker, const std::vector<std::string>& dump_dirs) {
  std::vector<std::string> out;
  auto add = [&](std::string path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
  };
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

std::vector<std::pair<uint32_t, std::string>> DumpsInDirectories(const std::vector<std::string>& dump_dirs) {
  std::vector<std::pair<uint32_t, std::string>> out;
  std::set<uint32_t> seen;
  for (const std::string& dir : dump_dirs) {
    std::unique_ptr<DIR, int (*)(DIR*)> handle(opendir(dir.c_str()), closedir);
    if (!handle) continue;
    std::vector<std::pair<uint32_t, std::string>> here;
    while (const dirent* entry = readdir(handle.get())) {
      uint32_t pid;
      if (DumpFileName(entry->d_name, &pid) && std::string_view(entry->d_name).find(' ') == std::string_view::npos) {
        here.emplace_back(pid, dir + "/" + entry->d_name);
      }
    }
    std::sort(here.begin(), here.end());
    for (auto& item : here) {
      if (seen.insert(item.first).second) out.push_back(std::move(item));
    }
  }
  return out;
}

}  // namespace jitdump::report
