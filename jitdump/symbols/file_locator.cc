#include "jitdump/symbols/file_locator.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace jitdump::symbols {
namespace {

constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

std::unique_ptr<ElfImage> OpenAt(const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), kOpenFlags);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<ElfImage> image = ElfImage::OpenFd(fd, error);
  if (image == nullptr) *error = path + ": " + *error;
  return image;
}

}  // namespace

const char* SourceName(Source source) {
  switch (source) {
    case Source::kNone: return "none";
    case Source::kPath: return "path";
    case Source::kProcRoot: return "proc-root";
    case Source::kMapFiles: return "map-files";
    case Source::kBuildIdCache: return "buildid-cache";
    case Source::kBuildIdCacheDebug: return "buildid-cache-debug";
    case Source::kOwnVdso: return "own-vdso";
    case Source::kDebuglink: return "debuglink";
    case Source::kDebugBuildId: return "debug-build-id";
    case Source::kDebugPath: return "debug-path";
    case Source::kKallsyms: return "kallsyms";
    case Source::kKallsymsCache: return "kallsyms-cache";
  }
  return "none";
}

std::string DefaultBuildIdDir() {
  if (const char* dir = std::getenv("PERF_BUILDID_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return std::string(home) + "/.debug";
  return {};
}

FileLocator::FileLocator(std::string root, std::string buildid_dir)
    : root_(std::move(root)), buildid_dir_(std::move(buildid_dir)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::unique_ptr<ElfImage> FileLocator::OpenHost(std::string_view path, std::string* error) const {
  return OpenAt(HostPath(path), error);
}

bool FileLocator::HasOtherRoot(uint32_t pid) {
  if (pid == 0) return false;
  auto it = other_root_.find(pid);
  if (it != other_root_.end()) return it->second;
  // Another mount namespace (a container's, even without a root of its own) or another root
  // directory (chroot): paths resolve differently there.
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat theirs {};
  struct stat ours {};
  bool other = false;
  if (stat((proc + "/ns/mnt").c_str(), &theirs) == 0 && stat("/proc/self/ns/mnt", &ours) == 0) {
    other = theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino;
  }
  if (!other && stat((proc + "/root").c_str(), &theirs) == 0 && stat("/", &ours) == 0) {
    other = theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino;
  }
  other_root_.emplace(pid, other);
  return other;
}

std::unique_ptr<ElfImage> FileLocator::OpenInProcessRoot(uint32_t pid, std::string_view path, std::string* error) const {
  const std::string root = "/proc/" + std::to_string(pid) + "/root";
  const int dir = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    *error = root + ": " + std::strerror(errno);
    return nullptr;
  }
  // The container's symlinks resolve inside its root ("/" and ".." stop there), never into
  // the host's files.
  struct open_how how {};
  how.flags = kOpenFlags;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const std::string relative(path.starts_with('/') ? path.substr(1) : path);
  const int fd = static_cast<int>(syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof(how)));
  const int err = errno;
  close(dir);
  if (fd < 0) {
    *error = root + "/" + relative + ": " + std::strerror(err);
    return nullptr;
  }
  std::unique_ptr<ElfImage> image = ElfImage::OpenFd(fd, error);
  if (image == nullptr) *error = root + "/" + relative + ": " + *error;
  return image;
}

std::string FileLocator::MapFilesPath(uint32_t pid, uint64_t start, uint64_t end) {
  char name[96];
  std::snprintf(name, sizeof(name), "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
  return name;
}

std::unique_ptr<ElfImage> FileLocator::OpenMapFiles(uint32_t pid, uint64_t start, uint64_t end,
                                                    std::string* error) const {
  return OpenAt(MapFilesPath(pid, start, end), error);
}

std::string FileLocator::BuildIdCachePath(std::span<const uint8_t> build_id, std::string_view kind) const {
  if (buildid_dir_.empty() || build_id.size() < 2) return {};
  const std::string hex = HexString(build_id);
  const std::string link = buildid_dir_ + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2);
  struct stat st {};
  // perf's old layout: the link names the file itself.
  if (stat(link.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return link;
  return link + "/" + std::string(kind);
}

std::string FileLocator::KallsymsCachePath(std::span<const uint8_t> build_id) const {
  if (buildid_dir_.empty() || build_id.empty()) return {};
  const std::string dir = buildid_dir_ + "/[kernel.kallsyms]/" + HexString(build_id);
  struct stat st {};
  if (stat((dir + "/kallsyms").c_str(), &st) == 0) return dir + "/kallsyms";
  return dir;  // perf's old layout: the file is named after the build id
}

std::vector<uint8_t> FileLocator::OwnVdso() {
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return {};
  // The vdso's extent: its line in /proc/self/maps.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("[vdso]") == std::string::npos) continue;
    uint64_t start = 0;
    uint64_t end = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &start, &end) != 2) return {};
    if (start != base || end <= start || end - start > (16u << 20)) return {};
    const auto* bytes = reinterpret_cast<const uint8_t*>(base);
    return std::vector<uint8_t>(bytes, bytes + (end - start));
  }
  return {};
}

}  // namespace jitdump::symbols
