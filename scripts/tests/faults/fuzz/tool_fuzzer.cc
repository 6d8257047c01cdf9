// libFuzzer target: the jitdump CLI itself (jitdump::tool::Main, jitdump/tool/cli.cc: the tool
// without its main()), every read-only command with and without --json, on the input as FILE; the fold
// command (jitdump/tool/fold.cc) with the script on stdin, and strip-inline's pure splitter
// (jitdump/tool/strip_inline.cc).
//
// Input layout: DUMP_BYTES [ "\n#PERF-SCRIPT#\n" PERF_SCRIPT_TEXT ]; the text after the separator
// is what `jitdump fold` reads on stdin. The file lives in a memfd (no disk I/O); stdout goes to
// /dev/null.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/read/decoder.h"
#include "jitdump/tool/fold.h"
#include "jitdump/tool/strip_inline.h"

namespace jitdump::tool {
int Main(int argc, char** argv);
}

namespace {

int g_file = -1;
int g_stdin = -1;
std::string g_path;

void Init() {
  if (g_file >= 0) return;
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDOUT_FILENO) < 0) std::abort();
  ::close(null_fd);
  g_file = ::memfd_create("jitdump-fuzz", 0);
  g_stdin = ::memfd_create("jitdump-fuzz-stdin", 0);
  if (g_file < 0 || g_stdin < 0) std::abort();
  g_path = "/proc/self/fd/" + std::to_string(g_file);
}

void Put(int fd, std::string_view bytes) {
  if (::ftruncate(fd, 0) != 0) std::abort();
  if (!bytes.empty() && ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) std::abort();
}

int Run(std::vector<std::string> args) {
  std::vector<char*> argv;
  std::string name = "jitdump";
  argv.push_back(name.data());
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = jitdump::tool::Main(static_cast<int>(argv.size() - 1), argv.data());
  std::fflush(stdout);
  if (rc < 0 || rc > 2) {
    std::fprintf(stderr, "tool_fuzzer: `jitdump %s` exit %d (documented: 0, 1, 2)\n", args[0].c_str(), rc);
    std::abort();
  }
  return rc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Init();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static const std::string_view kSeparator = "\n#PERF-SCRIPT#\n";
  const size_t sep = input.find(kSeparator);
  const std::string_view dump = input.substr(0, sep);
  const std::string_view script = sep == std::string_view::npos ? std::string_view() : input.substr(sep + kSeparator.size());
  Put(g_file, dump);

  for (const char* command : {"info", "list", "lines", "check"}) {
    Run({command, g_path});
    Run({command, "--json", g_path});
  }
  Run({"perfmap", g_path});
  // The same bytes as a perf recording (they are none, mostly: refused or read up to damage).
  Run({"perfdata", g_path});
  Run({"perfdata", "--json", "--records", "--unwind", g_path});
  // addr2line at addresses taken from the input (and one that can never be covered).
  std::vector<std::string> a2l = {"addr2line", g_path, "0xffffffffffffffff"};
  for (size_t off = 40; off + 8 <= dump.size() && a2l.size() < 8; off += dump.size() / 5 + 1) {
    uint64_t addr;
    std::memcpy(&addr, dump.data() + off, sizeof addr);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(addr));
    a2l.push_back(buf);
  }
  Run(a2l);
  if (sep != std::string_view::npos) {
    // `jitdump fold FILE < script`: the script becomes stdin (a memfd) for std::cin.
    Put(g_stdin, script);
    const int saved = ::dup(STDIN_FILENO);
    if (saved < 0 || ::dup2(g_stdin, STDIN_FILENO) < 0) std::abort();
    ::lseek(STDIN_FILENO, 0, SEEK_SET);
    std::clearerr(stdin);
    std::cin.clear();
    Run({"fold", g_path});
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
    std::clearerr(stdin);
    std::cin.clear();
    // The frame-line parser on every line.
    std::istringstream lines{std::string(script)};
    for (std::string line; std::getline(lines, line);) {
      jitdump::tool::ScriptFrame frame;
      (void)jitdump::tool::ParseFrameLine(line, &frame);
    }
  }
  // strip-inline's splitter; what it produces must still parse.
  std::vector<uint8_t> stripped, sidecar;
  jitdump::tool::StripInlineResult result;
  std::string error;
  const auto status = jitdump::tool::SplitInline(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(dump.data()), dump.size()), &stripped, &sidecar,
      &result, &error);
  if (status == jitdump::tool::StripStatus::kOk) {
    if (stripped.size() > dump.size()) std::abort();
    const jitdump::JitDump a = jitdump::Parse(stripped);
    const jitdump::JitDump b = jitdump::Parse(sidecar);
    if (!a.header_ok || !b.header_ok) std::abort();
  }
  return 0;
}
