// `jitdump lines FILE`: the line rows of every CODE_LOAD that has any, from DEBUG_INFO and from
// samply's inline-record line records.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump lines [--json] FILE\n"
    "For every CODE_LOAD with line information, its rows 0xADDRESS FILE:LINE, from DEBUG_INFO\n"
    "(source debug_info) and from samply's DEBUG_INFO2 line records (source inline).\n";

struct Row {
  uint64_t addr;
  std::string file;
  int64_t line;
  int64_t column;
  const char* source;  // "debug_info" or "inline"
};

std::vector<Row> RowsOf(const JitDump& dump, const LoadBody& load) {
  std::vector<Row> rows;
  if (load.debug_info >= 0) {
    if (const DebugInfoBody* d = dump.records[static_cast<size_t>(load.debug_info)].debug_info()) {
      for (const DebugLine& e : d->entries) rows.push_back({e.addr, e.file, e.line, e.discrim, "debug_info"});
    }
  }
  if (load.inline_info >= 0) {
    if (const InlineBody* info = dump.records[static_cast<size_t>(load.inline_info)].inline_info()) {
      for (const SamplyLineRecord& l : info->lines) {
        rows.push_back({load.code_addr + l.code_offset, l.file_index < info->files.size() ? info->files[l.file_index] : "?",
                        l.line_number, l.column_number, "inline"});
      }
    }
  }
  return rows;
}

Json LoadJson(const LoadBody& load, const std::vector<Row>& rows) {
  Json json_rows = Json::array();
  for (const Row& row : rows) {
    json_rows.push_back(
        {{"addr", row.addr}, {"file", row.file}, {"line", row.line}, {"column", row.column}, {"source", row.source}});
  }
  return {{"index", load.code_index},
          {"addr", load.code_addr},
          {"size", load.code_size},
          {"name", load.name},
          {"rows", std::move(json_rows)}};
}

std::string LoadText(const LoadBody& load, const std::vector<Row>& rows) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, "load %" PRIu64 " 0x%016" PRIx64 " %" PRIu64 " ", load.code_index,
                load.code_addr, load.code_size);
  std::string out = buffer + Shown(load.name) + "\n";
  for (const Row& row : rows) {
    std::snprintf(buffer, sizeof buffer, "  0x%016" PRIx64 " +0x%" PRIx64 " ", row.addr, row.addr - load.code_addr);
    out += buffer + Shown(row.file) + ":" + std::to_string(row.line) +
           (std::string_view(row.source) == "inline" ? "  (inline)\n" : "\n");
  }
  return out;
}

int Lines(const Invocation& in) {
  JitDump dump;
  if (const int status = LoadReadableDump(in.operands[0], &dump); status != kExitOk) return status;
  std::vector<const LoadBody*> loads;  // the loads with line information
  for (const Record& r : dump.records) {
    const LoadBody* load = r.load();
    if (load != nullptr && (load->debug_info >= 0 || load->inline_info >= 0)) loads.push_back(load);
  }
  if (in.json) {
    PrintJsonArray(loads.size(), [&](size_t k) { return LoadJson(*loads[k], RowsOf(dump, *loads[k])); });
  } else {
    for (const LoadBody* load : loads) std::fputs(LoadText(*load, RowsOf(dump, *load)).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

extern const Command kLinesCommand{
    .name = "lines",
    .synopsis = "lines FILE",
    .summary = "debug-info rows (address -> file:line) per CODE_LOAD",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .run = Lines,
};

}  // namespace jitdump::tool
