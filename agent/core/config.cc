// The option sources and their precedence (config.h).
#include "agent/core/config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitdump_agent {

namespace {

// One array, not text assembled from literals: GCC builds short concatenations from overlapping
// immediate stores, whose bytes (" over theer the limit") lintian's spelling check reads as a typo.
constexpr char kOverTheLimit[] = "over the limit of 1048576 bytes (1 MiB)";
static_assert(kMaxConfigFileBytes == 1048576, "kOverTheLimit names the limit");

// Whether the open file `fd` lives on a kernel pseudo file system, whose files report size 0.
bool OnPseudoFileSystem(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string ReadConfigFile(const std::string& path, std::string* contents) {
  // O_NONBLOCK: a FIFO (or /dev/stdin on an idle pipe) must not stall the JVM's start-up.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::strerror(errno);
  struct stat st;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if (OnPseudoFileSystem(fd)) {
    problem = "a /proc or /sys file, not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) > kMaxConfigFileBytes) {
    problem = std::to_string(st.st_size) + " bytes, " + kOverTheLimit;
  }
  contents->clear();
  char buf[4096];
  while (problem.empty()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) problem = std::strerror(errno);
    if (n <= 0) break;
    contents->append(buf, static_cast<size_t>(n));
    if (contents->size() > kMaxConfigFileBytes) {  // it grew while being read
      problem = kOverTheLimit;
    }
  }
  ::close(fd);
  if (!problem.empty()) contents->clear();
  return problem;
}

std::string ConfigFileToOptions(std::string_view contents) {
  std::string out;
  while (!contents.empty()) {
    const size_t newline = contents.find('\n');
    std::string_view line = contents.substr(0, newline);
    contents = newline == std::string_view::npos ? std::string_view() : contents.substr(newline + 1);
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!out.empty()) out.push_back(',');
    out.append(line);
  }
  return out;
}

ParseResult LoadOptions(std::string_view command_line, const char* environment, ConfigReader read_file,
                        Options& options) {
  const std::string_view env = environment != nullptr ? std::string_view(environment) : std::string_view();
  // Find config= first, from the sources that may name it (the command line wins).
  Options probe;
  (void)ParseOptions(env, probe);
  (void)ParseOptions(command_line, probe);

  ParseResult result;
  if (!probe.config.empty()) {
    std::string contents;
    const std::string problem = read_file(probe.config, &contents);
    if (problem.empty()) {
      ParseResult file_result = ParseOptions(ConfigFileToOptions(contents), options);
      const size_t total = file_result.errors.size();
      if (total > kMaxConfigFileErrors) file_result.errors.resize(kMaxConfigFileErrors);
      for (auto& error : file_result.errors) {
        error.message = "in " + Printable(probe.config, 100) + ": " + error.message;
        result.errors.push_back(std::move(error));
      }
      if (total > kMaxConfigFileErrors) {
        result.errors.push_back({"config", "in " + Printable(probe.config, 100) + ": " +
                                               std::to_string(total - kMaxConfigFileErrors) +
                                               " more errors not shown (is it a config file?)"});
      }
    } else {
      result.errors.push_back({"config", "cannot read config file '" + Printable(probe.config, 100) + "': " +
                                             Printable(problem, 200)});
    }
  }
  ParseResult env_result = ParseOptions(env, options);
  for (auto& error : env_result.errors) {
    error.message = std::string(kOptionsEnvironmentVariable) + ": " + error.message;
    result.errors.push_back(std::move(error));
  }
  ParseResult command_result = ParseOptions(command_line, options);
  for (auto& error : command_result.errors) result.errors.push_back(std::move(error));
  return result;
}

}  // namespace jitdump_agent
