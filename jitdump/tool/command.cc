// Helpers every command shares (command.h): usage errors, loading a dump and its sidecar,
// text safe for a terminal.
#include "jitdump/tool/command.h"

#include <unistd.h>

#include <cstdio>

#include "jitdump/format/text.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/regular_file.h"

namespace jitdump::tool {

const std::string* Invocation::Value(std::string_view name) const {
  const auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

std::vector<std::string> Invocation::Values(std::string_view name) const {
  const auto it = lists.find(name);
  return it == lists.end() ? std::vector<std::string>{} : it->second;
}

int Invocation::UsageError(const std::string& message) const {
  std::fprintf(stderr, "jitdump: %s\n%.*s", message.c_str(), static_cast<int>(command->usage.size()),
               command->usage.data());
  return kExitUsage;
}

namespace {

// Decodes the regular file at `path` through a window of reads, never a mapping: a dump cut
// shorter while it is read (a producer dropping a torn record) reads as a truncated tail rather
// than a SIGBUS.
Status ReadDump(const std::string& path, JitDump* dump) {
  int fd = -1;
  uint64_t size = 0;
  if (const Status status = OpenRegularFile(path, &fd, &size); !status.ok()) return status;
  const Status status = ParseFile(fd, size, FileLimits{}, dump);
  ::close(fd);
  return status;
}

}  // namespace

bool LoadDump(const std::string& path, JitDump* dump) {
  if (const Status status = ReadDump(path, dump); !status.ok()) {
    std::fprintf(stderr, "jitdump: %s: %s\n", path.c_str(), status.ToString().c_str());
    return false;
  }
  return true;
}

int LoadReadableDump(const std::string& path, JitDump* dump) {
  if (!LoadDump(path, dump)) return kExitUsage;
  if (dump->header_ok) return kExitOk;
  for (const Problem& p : dump->problems) {
    std::fprintf(stderr, "jitdump: %s: %s\n", path.c_str(), FormatProblem(p).c_str());
  }
  return kExitInvalid;
}

bool LoadSidecar(const std::string& path, JitDump* sidecar) {
  if (!ReadDump(path + ".inline", sidecar).ok()) return false;
  if (!sidecar->header_ok) {
    std::fprintf(stderr, "jitdump: ignoring %s.inline: not a readable jitdump\n", path.c_str());
    return false;
  }
  return true;
}

std::string Shown(std::string_view text) { return EscapedText(text, /*keep_non_ascii=*/true); }

}  // namespace jitdump::tool
