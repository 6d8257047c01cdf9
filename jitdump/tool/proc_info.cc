// Reading /proc about a running process (proc_info.h).
#include "jitdump/tool/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "jitdump/read/untrusted_file.h"
#include "jitdump/write/safe_file.h"

namespace jitdump::tool {
namespace {

// /proc files are generated: read them whole, up to a bound (a process can map a great many
// files; its environment is bounded by the kernel's argument limits).
std::string ReadProc(uint32_t pid, const char* what, size_t max_bytes = 64 << 20) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + what;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > max_bytes) break;
  }
  ::close(fd);
  return text;
}

template <typename Each>
void ForEachLine(std::string_view text, char separator, Each each) {
  while (!text.empty()) {
    const size_t end = text.find(separator);
    each(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// The whitespace-separated numbers after "Key:" in a /proc/PID/status line.
std::vector<uint64_t> Numbers(std::string_view line) {
  std::vector<uint64_t> out;
  line.remove_prefix(line.find(':') + 1);
  while (!line.empty()) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc()) break;
    out.push_back(value);
    line.remove_prefix(static_cast<size_t>(end - line.data()));
  }
  return out;
}

// The path field of a /proc/PID/maps line ("" for an anonymous mapping).
std::string_view MapsPath(std::string_view line) {
  const size_t slash = line.find(" /");
  return slash == std::string_view::npos ? std::string_view() : line.substr(slash + 1);
}

bool EndsWithDump(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view base = path.substr(slash + 1);
  if (base.size() < 10 || base.substr(0, 4) != "jit-" || base.substr(base.size() - 5) != ".dump") return false;
  base = base.substr(4, base.size() - 9);
  return !base.empty() && base.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

bool ReadCredentials(uint32_t pid, ProcessCredentials* credentials, std::string* error) {
  const std::string status = ReadProc(pid, "status", 1 << 20);
  if (status.empty()) {
    *error = "no process " + std::to_string(pid);
    return false;
  }
  bool uid = false, gid = false;
  ForEachLine(status, '\n', [&](std::string_view line) {
    const std::vector<uint64_t> n = Numbers(line);
    if (line.rfind("Uid:", 0) == 0 && n.size() >= 2) {
      credentials->euid = static_cast<uid_t>(n[1]);
      uid = true;
    } else if (line.rfind("Gid:", 0) == 0 && n.size() >= 2) {
      credentials->egid = static_cast<gid_t>(n[1]);
      gid = true;
    } else if (line.rfind("Groups:", 0) == 0) {
      for (uint64_t g : n) credentials->groups.push_back(static_cast<gid_t>(g));
    } else if (line.rfind("NStgid:", 0) == 0 && !n.empty()) {
      credentials->nspid = static_cast<uint32_t>(n.back());
    }
  });
  if (credentials->nspid == 0) credentials->nspid = pid;
  if (!uid || !gid) {
    *error = "cannot read the credentials of process " + std::to_string(pid);
    return false;
  }
  return true;
}

bool SameNamespace(uint32_t pid, const char* kind) {
  struct stat mine {}, theirs {};
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  if (::stat((std::string("/proc/self/ns/") + kind).c_str(), &mine) != 0 || ::stat(path.c_str(), &theirs) != 0) {
    return false;
  }
  return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

std::string MappedDump(uint32_t pid, bool* deleted) {
  std::string found;
  ForEachLine(ReadProc(pid, "maps"), '\n', [&](std::string_view line) {
    std::string_view path = MapsPath(line);
    bool gone = false;
    while (path.size() > 10 && path.substr(path.size() - 10) == " (deleted)") {
      path.remove_suffix(10);
      gone = true;
    }
    if (found.empty() && EndsWithDump(path)) {
      found = std::string(path);
      if (deleted != nullptr) *deleted = gone;
    }
  });
  return found;
}

bool HasThreadNamed(uint32_t pid, std::string_view name) {
  DIR* tasks = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (tasks == nullptr) return false;
  bool found = false;
  while (const dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::string comm = ReadProc(pid, (std::string("task/") + task->d_name + "/comm").c_str(), 64);
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    found = found || comm == name;
  }
  ::closedir(tasks);
  return found;
}

bool HasOpenFile(uint32_t pid, const std::string& path) {
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* fds = ::opendir(fd_dir.c_str());
  if (fds == nullptr) return false;
  bool found = false;
  while (const dirent* fd = ::readdir(fds)) {
    if (fd->d_name[0] == '.') continue;
    char target[4096];
    const ssize_t n = ::readlinkat(::dirfd(fds), fd->d_name, target, sizeof target - 1);
    if (n <= 0) continue;
    std::string_view link(target, static_cast<size_t>(n));
    if (link.size() > 10 && link.substr(link.size() - 10) == " (deleted)") link.remove_suffix(10);
    found = found || link == path;
  }
  ::closedir(fds);
  return found;
}

bool MapsAgentLibrary(uint32_t pid) {
  bool found = false;
  ForEachLine(ReadProc(pid, "maps"), '\n', [&](std::string_view line) {
    const std::string_view path = MapsPath(line);
    const std::string_view base = path.substr(path.rfind('/') + 1);
    if (base.rfind("libjitdumpagent", 0) == 0 && base.find(".so") != std::string_view::npos) found = true;
  });
  return found;
}

bool MapsLibjvm(uint32_t pid) {
  bool found = false;
  ForEachLine(ReadProc(pid, "maps"), '\n', [&](std::string_view line) {
    const std::string_view path = MapsPath(line);
    if (path.size() >= 10 && path.substr(path.size() - 10) == "/libjvm.so") found = true;
  });
  return found;
}

std::string AttachSocketName(const ProcessCredentials& credentials) {
  return ".java_pid" + std::to_string(credentials.nspid);
}

std::string AttachSocketPath(uint32_t pid, const ProcessCredentials& credentials) {
  return "/proc/" + std::to_string(pid) + "/root/tmp/" + AttachSocketName(credentials);
}

int64_t ForeignAttachSocketOwner(uint32_t pid, const ProcessCredentials& credentials) {
  // The process's /tmp is its user's to arrange (a container's root): neither it nor the socket
  // is followed if it is a link; only the socket's metadata is read.
  const int root = ::open(("/proc/" + std::to_string(pid) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  const int tmp = ::openat(root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  ::close(root);
  if (tmp < 0) return -1;
  struct stat st {};
  const bool socket = ::fstatat(tmp, AttachSocketName(credentials).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISSOCK(st.st_mode);
  ::close(tmp);
  if (!socket || st.st_uid == credentials.euid) return -1;
  return static_cast<int64_t>(st.st_uid);
}

bool HasJvmFlag(uint32_t pid, const std::string& flag) {
  bool found = false;
  ForEachLine(ReadProc(pid, "cmdline", 4 << 20), '\0', [&](std::string_view arg) { found = found || arg == flag; });
  if (found) return true;
  ForEachLine(ReadProc(pid, "environ", 4 << 20), '\0', [&](std::string_view entry) {
    for (std::string_view name : {"JAVA_TOOL_OPTIONS=", "JDK_JAVA_OPTIONS=", "_JAVA_OPTIONS="}) {
      if (entry.rfind(name, 0) != 0) continue;
      ForEachLine(entry.substr(name.size()), ' ', [&](std::string_view word) { found = found || word == flag; });
    }
  });
  return found;
}

int JdkFeatureVersion(uint32_t pid) {
  char exe[4096];
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = ::readlink(link.c_str(), exe, sizeof exe - 1);
  if (n <= 0) return 0;
  const std::string home = DirectoryOf(DirectoryOf(std::string(exe, static_cast<size_t>(n))));
  std::string release;
  if (!ReadUntrusted("/proc/" + std::to_string(pid) + "/root" + home + "/release", 64 << 10, &release).ok()) return 0;
  const size_t at = release.find("JAVA_VERSION=\"");
  if (at == std::string::npos) return 0;
  int version = 0;
  const char* begin = release.data() + at + 14;
  std::from_chars(begin, release.data() + release.size(), version);
  return version;
}

}  // namespace jitdump::tool
