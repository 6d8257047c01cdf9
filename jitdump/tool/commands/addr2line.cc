// `jitdump addr2line FILE ADDR...`: the load covering each address, its name, file:line and
// inline chain (from FILE or from FILE.inline after `jitdump strip-inline`).
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "jitdump/read/queries.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/fold.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump addr2line FILE ADDR...\n"
    "ADDR is hexadecimal (0x optional). For each, the latest CODE_LOAD covering it, then the\n"
    "inline chain innermost first (#0 is where the address is, the last frame the compiled\n"
    "method), each FUNCTION FILE:LINE. Without a DEBUG_INFO2 record the chain is the load itself\n"
    "with its DEBUG_INFO line. Inline records moved to FILE.inline by `jitdump strip-inline` are\n"
    "used when that file exists. Exit 1 if some ADDR is not covered.\n";

// Prints what covers `addr`; false when no load does.
bool Describe(const JitDump& dump, const SidecarIndex& sidecar, uint64_t addr) {
  const int64_t index = FindLoad(dump, addr);
  if (index < 0) {
    std::printf("0x%" PRIx64 ": not in any CODE_LOAD\n", addr);
    return false;
  }
  const Record& record = dump.records[static_cast<size_t>(index)];
  const LoadBody& load = *record.load();
  std::printf("0x%" PRIx64 ": %s (code_index %" PRIu64 ", 0x%" PRIx64 "+0x%" PRIx64 ", load at offset %" PRIu64 ")\n",
              addr, Shown(load.name).c_str(), load.code_index, load.code_addr, addr - load.code_addr, record.offset);
  const std::vector<InlineFrame> chain = InlineChain(dump, sidecar, static_cast<size_t>(index), addr);
  for (size_t k = 0; k < chain.size(); ++k) {
    std::printf("  #%zu %s %s:%u%s\n", k, Shown(chain[k].function).c_str(), Shown(chain[k].file).c_str(),
                chain[k].line, k == 0 ? "" : "  (caller)");
  }
  if (!chain.empty()) return true;
  std::string file;
  uint32_t line = 0;
  if (FindLine(dump, static_cast<size_t>(index), addr, &file, &line)) {
    std::printf("  #0 %s %s:%u\n", Shown(load.name).c_str(), Shown(file).c_str(), line);
  } else {
    std::printf("  #0 %s ??:0\n", Shown(load.name).c_str());
  }
  return true;
}

int Addr2line(const Invocation& in) {
  std::vector<uint64_t> addrs;
  for (size_t i = 1; i < in.operands.size(); ++i) {
    uint64_t addr;
    if (!ParseHex(in.operands[i], &addr)) return in.UsageError("bad address: " + in.operands[i]);
    addrs.push_back(addr);
  }
  const std::string& path = in.operands[0];
  JitDump dump;
  if (const int status = LoadReadableDump(path, &dump); status != kExitOk) return status;
  JitDump sidecar_dump;
  const SidecarIndex sidecar(LoadSidecar(path, &sidecar_dump) ? &sidecar_dump : nullptr);
  int status = kExitOk;
  for (uint64_t addr : addrs) {
    if (!Describe(dump, sidecar, addr)) status = kExitInvalid;
  }
  return status;
}

}  // namespace

extern const Command kAddr2lineCommand{
    .name = "addr2line",
    .synopsis = "addr2line FILE ADDR...",
    .summary = "code load, name, file:line and inline chain (innermost first) at ADDR",
    .usage = kUsage,
    .min_operands = 2,
    .max_operands = SIZE_MAX,
    .operands = "FILE and at least one ADDR",
    .run = Addr2line,
};

}  // namespace jitdump::tool
