// `jitdump list FILE`: one line (or JSON object) per CODE_LOAD in file order.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "jitdump/read/queries.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump list [--json] FILE\n"
    "One line per CODE_LOAD in file order:\n"
    "  INDEX 0xADDRESS SIZE NAME [SOURCE:FIRST-LAST] [inlines=N]\n"
    "INDEX is the load's code_index, SIZE its code size in bytes (decimal).\n";

size_t InlineCallCount(const JitDump& dump, const LoadBody& load) {
  if (load.inline_info < 0) return 0;
  const InlineBody* info = dump.records[static_cast<size_t>(load.inline_info)].inline_info();
  return info == nullptr ? 0 : info->calls.size();
}

Json LoadJson(const JitDump& dump, size_t index) {
  const Record& record = dump.records[index];
  const LoadBody& load = *record.load();
  const std::string source = SourceRange(dump, index);
  return {
      {"index", load.code_index},
      {"addr", load.code_addr},
      {"size", load.code_size},
      {"name", load.name},
      {"source", source.empty() ? Json(nullptr) : Json(source)},
      {"inlines", InlineCallCount(dump, load)},
      {"offset", record.offset},
      {"timestamp", record.timestamp},
  };
}

std::string LoadLine(const JitDump& dump, size_t index) {
  const LoadBody& load = *dump.records[index].load();
  char prefix[96];
  std::snprintf(prefix, sizeof prefix, "%" PRIu64 " 0x%016" PRIx64 " %" PRIu64 " ", load.code_index, load.code_addr,
                load.code_size);
  std::string line = prefix + Shown(load.name);
  const std::string source = SourceRange(dump, index);
  if (!source.empty()) line += "  [" + Shown(source) + "]";
  if (const size_t inlines = InlineCallCount(dump, load); inlines != 0) line += " inlines=" + std::to_string(inlines);
  return line + "\n";
}

int List(const Invocation& in) {
  JitDump dump;
  if (const int status = LoadReadableDump(in.operands[0], &dump); status != kExitOk) return status;
  std::vector<size_t> loads;
  for (size_t i = 0; i < dump.records.size(); ++i) {
    if (dump.records[i].load() != nullptr) loads.push_back(i);
  }
  if (in.json) {
    PrintJsonArray(loads.size(), [&](size_t k) { return LoadJson(dump, loads[k]); });
  } else {
    for (size_t index : loads) std::fputs(LoadLine(dump, index).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

extern const Command kListCommand{
    .name = "list",
    .synopsis = "list FILE",
    .summary = "one line per CODE_LOAD: index, address, size, name, source range, inlines",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .run = List,
};

}  // namespace jitdump::tool
