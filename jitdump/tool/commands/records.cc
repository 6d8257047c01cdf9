// `jitdump records --json FILE`: every record decoded, in file order, as one JSON object. The
// way scripts read a dump (PLAN contract 1) instead of parsing the format again; its members
// are a contract: add, never rename or drop.
#include <string>

#include "jitdump/tool/command.h"
#include "jitdump/tool/dump_json.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump records --json FILE\n"
    "Every record of FILE in file order as one JSON object: the header, then per record its offset,\n"
    "type, id, total_size, timestamp, valid, and its decoded body (load, debug_info, inline, move,\n"
    "unwinding); a CODE_LOAD names the indexes of the DEBUG_INFO and inline record that apply to it.\n"
    "Then the truncated tail (null when none) and the count of unknown records. Scripts read dumps\n"
    "through this instead of parsing the format again.\n";

Json IndexOrNull(int64_t index) { return index < 0 ? Json(nullptr) : Json(index); }

Json LoadJson(const LoadBody& l) {
  return {{"pid", l.pid},
          {"tid", l.tid},
          {"vma", l.vma},
          {"code_addr", l.code_addr},
          {"code_size", l.code_size},
          {"code_index", l.code_index},
          {"name", l.name},
          {"code_offset", l.code_offset},
          {"debug_info", IndexOrNull(l.debug_info)},
          {"inline_info", IndexOrNull(l.inline_info)},
          {"unwinding_info", IndexOrNull(l.unwinding_info)}};
}

Json DebugInfoJson(const DebugInfoBody& d) {
  Json entries = Json::array();
  for (const DebugLine& e : d.entries) {
    entries.push_back({{"addr", e.addr}, {"line", e.line}, {"discrim", e.discrim}, {"file", e.file}});
  }
  return {{"code_addr", d.code_addr}, {"nr_entry", d.nr_entry}, {"complete", d.complete}, {"entries", std::move(entries)}};
}

Json InlineJson(const InlineBody& info) {
  Json functions = Json::array(), calls = Json::array(), ranges = Json::array(), lines = Json::array();
  for (const SamplyFunctionRecord& f : info.functions) {
    functions.push_back({{"name_index", f.function_name_index},
                         {"file_index", f.file_index},
                         {"start_line", f.start_line},
                         {"start_column", f.start_column},
                         {"flags", f.flags}});
  }
  for (const SamplyInlineCallRecord& c : info.calls) {
    calls.push_back({{"depth", c.depth},
                     {"range_count", c.range_count},
                     {"function_index", c.function_index},
                     {"call_line", c.call_line_number},
                     {"call_column", c.call_column_number}});
  }
  for (const SamplyRangeRecord& r : info.ranges) ranges.push_back({{"start_offset", r.start_offset}, {"size", r.size}});
  for (const SamplyLineRecord& l : info.lines) {
    lines.push_back(
        {{"code_offset", l.code_offset}, {"file_index", l.file_index}, {"line", l.line_number}, {"column", l.column_number}});
  }
  return {{"files", info.files},
          {"function_names", info.function_names},
          {"functions", std::move(functions)},
          {"calls", std::move(calls)},
          {"ranges", std::move(ranges)},
          {"lines", std::move(lines)}};
}

Json MoveJson(const MoveBody& m) {
  return {{"pid", m.pid},
          {"tid", m.tid},
          {"vma", m.vma},
          {"old_code_addr", m.old_code_addr},
          {"new_code_addr", m.new_code_addr},
          {"code_size", m.code_size},
          {"code_index", m.code_index}};
}

Json UnwindingJson(const UnwindingBody& u) {
  return {{"unwind_data_size", u.unwind_data_size},
          {"eh_frame_hdr_size", u.eh_frame_hdr_size},
          {"mapped_size", u.mapped_size}};
}

Json RecordJson(const Record& r) {
  Json json = {{"offset", r.offset},           {"type", RecordTypeName(r.id)}, {"id", r.id},
               {"total_size", r.total_size},   {"timestamp", r.timestamp},     {"valid", r.valid}};
  if (const LoadBody* load = r.load()) {
    json["load"] = LoadJson(*load);
  } else if (const DebugInfoBody* debug = r.debug_info()) {
    json["debug_info"] = DebugInfoJson(*debug);
  } else if (const InlineBody* info = r.inline_info()) {
    json["inline"] = InlineJson(*info);
  } else if (const MoveBody* move = r.move()) {
    json["move"] = MoveJson(*move);
  } else if (const UnwindingBody* unwinding = r.unwinding()) {
    json["unwinding"] = UnwindingJson(*unwinding);
  }
  return json;
}

int Records(const Invocation& in) {
  const std::string& path = in.operands[0];
  JitDump dump;
  if (const int status = LoadReadableDump(path, &dump); status != kExitOk) return status;
  PrintJsonObjectWithArray(
      {{"file", path}, {"size", dump.file_size}, {"cross_endian", dump.cross_endian}, {"header", HeaderJson(dump.header)}},
      "records", dump.records.size(), [&](size_t i) { return RecordJson(dump.records[i]); },
      {{"truncated", TruncatedTailJson(dump)}, {"unknown_records", dump.unknown_records}});
  return kExitOk;
}

}  // namespace

extern const Command kRecordsCommand{
    .name = "records",
    .synopsis = "records --json FILE",
    .summary = "every record, decoded, in file order (what scripts read instead of the format)",
    .usage = kUsage,
    .json = JsonMode::kRequired,
    .operands = "exactly one FILE",
    .run = Records,
};

}  // namespace jitdump::tool
