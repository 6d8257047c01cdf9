// JSON of a dump's header and truncated tail (dump_json.h).
#include "jitdump/tool/dump_json.h"

namespace jitdump::tool {

Json HeaderJson(const FileHeader& h) {
  return {{"magic", h.magic},         {"version", h.version}, {"total_size", h.total_size},
          {"elf_mach", h.elf_mach},   {"pad1", h.pad1},       {"pid", h.pid},
          {"timestamp", h.timestamp}, {"flags", h.flags}};
}

Json TruncatedTailJson(const JitDump& dump) {
  if (!dump.truncated_offset) return nullptr;
  return {{"offset", *dump.truncated_offset}, {"bytes", dump.truncated_bytes}, {"total_size", dump.truncated_needed}};
}

}  // namespace jitdump::tool
