// `jitdump info FILE`: the header, record counts by type, code bytes, the truncated tail and
// samply inline-record statistics.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>

#include "jitdump/read/consumer_rules.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/dump_json.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump info [--json] FILE\n"
    "Prints the header fields, record counts by type, total code bytes, the truncated tail if any,\n"
    "and samply inline-record statistics (functions, inline calls, max depth).\n";

struct Summary {
  std::map<std::string, uint64_t> counts;  // by record type name
  uint64_t code_bytes = 0, loads = 0, closes = 0;
  uint64_t inline_records = 0, functions = 0, calls = 0, max_depth = 0;
  size_t errors = 0, warnings = 0;
};

Summary Summarize(const JitDump& dump) {
  Summary s;
  for (const Record& r : dump.records) {
    ++s.counts[RecordTypeName(r.id)];
    if (const LoadBody* load = r.load()) {
      ++s.loads;
      s.code_bytes += load->code_size;
    }
    if (r.id == static_cast<uint32_t>(RecordType::kCodeClose)) ++s.closes;
    if (const InlineBody* info = r.inline_info()) {
      ++s.inline_records;
      s.functions += info->functions.size();
      s.calls += info->calls.size();
      s.max_depth = std::max<uint64_t>(s.max_depth, info->max_depth);
    }
  }
  for (const Problem& p : Check(dump)) (p.severity == Severity::kError ? s.errors : s.warnings)++;
  return s;
}

void PrintInfoJson(const std::string& path, const JitDump& dump, const Summary& s) {
  Json counts = Json::object();
  for (const auto& [name, n] : s.counts) counts[name] = n;
  PrintJson({
      {"file", path},
      {"size", dump.file_size},
      {"cross_endian", dump.cross_endian},
      {"header", HeaderJson(dump.header)},
      {"records", dump.records.size()},
      {"counts", std::move(counts)},
      {"code_loads", s.loads},
      {"code_bytes", s.code_bytes},
      {"closed", s.closes != 0},
      {"unknown_records", dump.unknown_records},
      {"truncated", TruncatedTailJson(dump)},
      {"inline",
       {{"records", s.inline_records},
        {"functions", s.functions},
        {"inline_calls", s.calls},
        {"max_depth", s.max_depth}}},
      {"errors", s.errors},
      {"warnings", s.warnings},
  });
}

void PrintInfoText(const std::string& path, const JitDump& dump, const Summary& s) {
  const FileHeader& h = dump.header;
  std::printf("file: %s\n", path.c_str());
  std::printf("size: %" PRIu64 " bytes\n", dump.file_size);
  std::printf("byte order: %s\n", dump.cross_endian ? "cross-endian (swapped)" : "native");
  std::printf("header: version %u, total_size %u, elf_mach %u, pad1 0x%x, pid %u, timestamp %" PRIu64
              ", flags 0x%" PRIx64 "\n",
              h.version, h.total_size, h.elf_mach, h.pad1, h.pid, h.timestamp, h.flags);
  std::printf("records: %zu\n", dump.records.size());
  for (const auto& [name, n] : s.counts) std::printf("  %-18s %" PRIu64 "\n", name.c_str(), n);
  std::printf("code bytes: %" PRIu64 " in %" PRIu64 " loads\n", s.code_bytes, s.loads);
  if (s.closes == 0) std::printf("closed: no (no CODE_CLOSE record)\n");
  if (dump.truncated_offset) {
    std::printf("truncated tail: at offset %" PRIu64 ", %" PRIu64 " bytes present", *dump.truncated_offset,
                dump.truncated_bytes);
    if (dump.truncated_needed != 0) std::printf(" of %" PRIu64, dump.truncated_needed);
    std::printf("\n");
  } else {
    std::printf("truncated tail: none\n");
  }
  std::printf("inline records: %" PRIu64 ", functions %" PRIu64 ", inline calls %" PRIu64 ", max depth %" PRIu64 "\n",
              s.inline_records, s.functions, s.calls, s.max_depth);
  std::printf("problems: %zu errors, %zu warnings%s\n", s.errors, s.warnings,
              s.errors + s.warnings ? " (see `jitdump check`)" : "");
}

int Info(const Invocation& in) {
  const std::string& path = in.operands[0];
  JitDump dump;
  if (const int status = LoadReadableDump(path, &dump); status != kExitOk) return status;
  const Summary summary = Summarize(dump);
  if (in.json) {
    PrintInfoJson(path, dump, summary);
  } else {
    PrintInfoText(path, dump, summary);
  }
  return kExitOk;
}

}  // namespace

extern const Command kInfoCommand{
    .name = "info",
    .synopsis = "info FILE",
    .summary = "header, record counts, code bytes, truncated tail, inline statistics",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .run = Info,
};

}  // namespace jitdump::tool
