// jitdump: inspect, validate and use perf jitdump files.
//
// Exit codes: 0 success (check: valid, warnings allowed), 1 invalid input file / address not
// found, 2 usage error or unreadable file.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/perf_map.h"
#include "jitdump/reader.h"
#include "jitdump/tool/fold.h"
#include "jitdump/tool/strip_inline.h"

namespace jitdump::tool {
namespace {

// Names and file names come from the file: a crafted dump must not drive the terminal, so
// control characters are shown as \xNN.
std::string Shown(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

constexpr int kOk = 0;
constexpr int kInvalid = 1;
constexpr int kUsage = 2;

const char kMainUsage[] =
    "usage: jitdump COMMAND [OPTIONS] FILE [ARGS]\n"
    "\n"
    "Inspect and validate perf jitdump files (jit-<pid>.dump).\n"
    "\n"
    "commands:\n"
    "  info FILE              header, record counts, code bytes, truncated tail, inline statistics\n"
    "  list FILE              one line per CODE_LOAD: index, address, size, name, source range, inlines\n"
    "  lines FILE             debug-info rows (address -> file:line) per CODE_LOAD\n"
    "  addr2line FILE ADDR... code load, name, file:line and inline chain (innermost first) at ADDR\n"
    "  check FILE             validate for perf 6.1 and samply; exit 0 valid, 1 invalid\n"
    "  perfmap FILE           the equivalent perf-<pid>.map text (latest code at each address wins)\n"
    "  records --json FILE    every record, decoded, in file order (what scripts read instead of the format)\n"
    "  fold FILE              fold `perf script` output on stdin into stacks, expanding inlined JIT frames\n"
    "  strip-inline FILE      move samply inline records into FILE.inline (see its --help)\n"
    "\n"
    "options: --json (info, list, lines, check, records), --help (every command)\n"
    "exit status: 0 ok, 1 invalid file or address not found, 2 usage error or unreadable file\n";

const char kInfoUsage[] =
    "usage: jitdump info [--json] FILE\n"
    "Prints the header fields, record counts by type, total code bytes, the truncated tail if any,\n"
    "and samply inline-record statistics (functions, inline calls, max depth).\n";
const char kListUsage[] =
    "usage: jitdump list [--json] FILE\n"
    "One line per CODE_LOAD in file order:\n"
    "  INDEX 0xADDRESS SIZE NAME [SOURCE:FIRST-LAST] [inlines=N]\n"
    "INDEX is the load's code_index, SIZE its code size in bytes (decimal).\n";
const char kLinesUsage[] =
    "usage: jitdump lines [--json] FILE\n"
    "For every CODE_LOAD with line information, its rows 0xADDRESS FILE:LINE, from DEBUG_INFO\n"
    "(source debug_info) and from samply's DEBUG_INFO2 line records (source inline).\n";
const char kAddr2lineUsage[] =
    "usage: jitdump addr2line FILE ADDR...\n"
    "ADDR is hexadecimal (0x optional). For each, the latest CODE_LOAD covering it, then the\n"
    "inline chain innermost first (#0 is where the address is, the last frame the compiled\n"
    "method), each FUNCTION FILE:LINE. Without a DEBUG_INFO2 record the chain is the load itself\n"
    "with its DEBUG_INFO line. Inline records moved to FILE.inline by `jitdump strip-inline` are\n"
    "used when that file exists. Exit 1 if some ADDR is not covered.\n";
const char kCheckUsage[] =
    "usage: jitdump check [--json] FILE\n"
    "Validates FILE as perf 6.1 (perf inject --jit) and samply read it. Prints one line per\n"
    "problem: offset N (0xN): error|warning: message. Exit 0 when there is no error (warnings\n"
    "allowed), 1 otherwise.\n";
const char kPerfmapUsage[] =
    "usage: jitdump perfmap FILE\n"
    "Prints perf-<pid>.map lines (START SIZE name, hex) for the code the dump leaves mapped:\n"
    "where loads overlap, the latest one wins.\n";
const char kFoldUsage[] =
    "usage: jitdump fold FILE < perf-script-output\n"
    "Reads `perf script` text on stdin and prints folded stacks \"comm;outer;...;inner COUNT\",\n"
    "one per distinct stack, sorted. Accepted input:\n"
    "  - callchains (perf record -g), default `perf script` or `perf script -F comm,pid,tid,ip,sym`\n"
    "    (any fields, as long as the header line holds comm then pid or pid/tid, and each frame is\n"
    "    an indented line \"ADDR [SYM[+0xOFF]] [(DSO)]\"); samples are separated by blank lines;\n"
    "  - single frames without -g: \"comm pid[/tid] ADDR SYM\" on one line.\n"
    "A frame whose DSO is absent, [unknown], a perf map, a jitted-*.so or anonymous memory and whose\n"
    "address lies in a CODE_LOAD of FILE is a JIT frame: with a DEBUG_INFO2 record it becomes its\n"
    "inline chain outermost -> innermost; otherwise it keeps perf's symbol (the load's name if perf\n"
    "said [unknown]). Other frames keep perf's symbol. ';' in names becomes ','. Inline records\n"
    "moved to FILE.inline by `jitdump strip-inline` are used when that file exists.\n"
    "When the header line carries perf's time field (SECONDS.FRACTION:, as in the default output;\n"
    "record with -k mono so it is the dump's clock), a frame older than the code now at its address\n"
    "maps to the latest load that existed at that time (code cache addresses are reused).\n";

const char kRecordsUsage[] =
    "usage: jitdump records --json FILE\n"
    "Every record of FILE in file order as one JSON object: the header, then per record its offset,\n"
    "type, id, total_size, timestamp, valid, and its decoded body (load, debug_info, inline, move,\n"
    "unwinding); a CODE_LOAD names the indexes of the DEBUG_INFO and inline record that apply to it.\n"
    "Then the truncated tail (null when none) and the count of unknown records. Scripts read dumps\n"
    "through this instead of parsing the format again.\n";

struct Args {
  bool json = false;
  bool help = false;
  std::vector<std::string> positional;
  std::string bad_option;
};

Args ParseArgs(int argc, char** argv, int first) {
  Args args;
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && a == "--json") {
      args.json = true;
    } else if (!options_done && (a == "--help" || a == "-h")) {
      args.help = true;
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      if (args.bad_option.empty()) args.bad_option = std::string(a);
    } else {
      args.positional.emplace_back(a);
    }
  }
  return args;
}

int Usage(const char* usage, const std::string& message) {
  std::fprintf(stderr, "jitdump: %s\n%s", message.c_str(), usage);
  return kUsage;
}

// ---- JSON output ----

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t length = Utf8SequenceLength(s, i);
    const bool valid = length != 0;
    const size_t extra = valid ? length - 1 : 0;
    if (!valid) {  // not UTF-8: keep the byte as a Latin-1 code point
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
      ++i;
      continue;
    }
    if (extra > 0) {
      out.append(s.substr(i, extra + 1));
      i += extra + 1;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string U64(uint64_t v) { return std::to_string(v); }

// ---- loading ----

bool Load(const std::string& path, JitDump* dump) {
  std::vector<uint8_t> bytes;
  const Status status = ReadWholeFile(path, &bytes);
  if (!status.ok()) {
    std::fprintf(stderr, "jitdump: %s: %s\n", path.c_str(), status.ToString().c_str());
    return false;
  }
  *dump = Parse(bytes);
  return true;
}

// FILE.inline, written by `jitdump strip-inline`, when it exists and is a readable jitdump.
bool LoadSidecar(const std::string& path, JitDump* sidecar) {
  std::vector<uint8_t> bytes;
  if (!ReadWholeFile(path + ".inline", &bytes).ok()) return false;
  *sidecar = Parse(bytes);
  if (!sidecar->header_ok) {
    std::fprintf(stderr, "jitdump: ignoring %s.inline: not a readable jitdump\n", path.c_str());
    return false;
  }
  return true;
}

// For commands other than check: report a file we cannot read at all.
bool RequireHeader(const std::string& path, const JitDump& dump) {
  if (dump.header_ok) return true;
  for (const Problem& p : dump.problems) std::fprintf(stderr, "jitdump: %s: %s\n", path.c_str(), FormatProblem(p).c_str());
  return false;
}

size_t InlineCallCount(const JitDump& dump, const LoadBody& load) {
  if (load.inline_info < 0) return 0;
  const InlineBody* info = dump.records[static_cast<size_t>(load.inline_info)].inline_info();
  return info == nullptr ? 0 : info->calls.size();
}

// ---- commands ----

int Info(const Args& args) {
  if (args.help) return std::fputs(kInfoUsage, stdout), kOk;
  if (args.positional.size() != 1) return Usage(kInfoUsage, "info takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  std::map<std::string, uint64_t> counts;
  uint64_t code_bytes = 0, loads = 0, inline_records = 0, functions = 0, calls = 0, max_depth = 0, closes = 0;
  for (const Record& r : dump.records) {
    ++counts[r.id <= 4 || r.id == static_cast<uint32_t>(RecordType::kSamplyDebugInfo2) ? RecordTypeName(r.id)
                                                                                          : "UNKNOWN"];
    if (const LoadBody* load = r.load()) {
      ++loads;
      code_bytes += load->code_size;
    }
    if (r.id == static_cast<uint32_t>(RecordType::kCodeClose)) ++closes;
    if (const InlineBody* info = r.inline_info()) {
      ++inline_records;
      functions += info->functions.size();
      calls += info->calls.size();
      max_depth = std::max<uint64_t>(max_depth, info->max_depth);
    }
  }
  size_t errors = 0, warnings = 0;
  for (const Problem& p : Check(dump)) (p.severity == Severity::kError ? errors : warnings)++;
  const FileHeader& h = dump.header;
  if (args.json) {
    std::string out = "{\"file\":" + JsonString(path) + ",\"size\":" + U64(dump.file_size) +
                      ",\"cross_endian\":" + (dump.cross_endian ? "true" : "false") + ",\"header\":{\"version\":" +
                      U64(h.version) + ",\"total_size\":" + U64(h.total_size) + ",\"elf_mach\":" + U64(h.elf_mach) +
                      ",\"pad1\":" + U64(h.pad1) + ",\"pid\":" + U64(h.pid) + ",\"timestamp\":" + U64(h.timestamp) +
                      ",\"flags\":" + U64(h.flags) + "},\"records\":" + U64(dump.records.size()) + ",\"counts\":{";
    bool first = true;
    for (const auto& [name, n] : counts) {
      out += (first ? "" : ",") + JsonString(name) + ":" + U64(n);
      first = false;
    }
    out += "},\"code_loads\":" + U64(loads) + ",\"code_bytes\":" + U64(code_bytes) +
           ",\"closed\":" + (closes != 0 ? "true" : "false") + ",\"unknown_records\":" + U64(dump.unknown_records) +
           ",\"truncated\":";
    if (dump.truncated_offset) {
      out += "{\"offset\":" + U64(*dump.truncated_offset) + ",\"bytes\":" + U64(dump.truncated_bytes) +
             ",\"total_size\":" + U64(dump.truncated_needed) + "}";
    } else {
      out += "null";
    }
    out += ",\"inline\":{\"records\":" + U64(inline_records) + ",\"functions\":" + U64(functions) +
           ",\"inline_calls\":" + U64(calls) + ",\"max_depth\":" + U64(max_depth) + "},\"errors\":" + U64(errors) +
           ",\"warnings\":" + U64(warnings) + "}\n";
    std::fputs(out.c_str(), stdout);
    return kOk;
  }
  std::printf("file: %s\n", path.c_str());
  std::printf("size: %" PRIu64 " bytes\n", dump.file_size);
  std::printf("byte order: %s\n", dump.cross_endian ? "cross-endian (swapped)" : "native");
  std::printf("header: version %u, total_size %u, elf_mach %u, pad1 0x%x, pid %u, timestamp %" PRIu64
              ", flags 0x%" PRIx64 "\n",
              h.version, h.total_size, h.elf_mach, h.pad1, h.pid, h.timestamp, h.flags);
  std::printf("records: %zu\n", dump.records.size());
  for (const auto& [name, n] : counts) std::printf("  %-18s %" PRIu64 "\n", name.c_str(), n);
  std::printf("code bytes: %" PRIu64 " in %" PRIu64 " loads\n", code_bytes, loads);
  if (closes == 0) std::printf("closed: no (no CODE_CLOSE record)\n");
  if (dump.truncated_offset) {
    std::printf("truncated tail: at offset %" PRIu64 ", %" PRIu64 " bytes present", *dump.truncated_offset,
                dump.truncated_bytes);
    if (dump.truncated_needed != 0) std::printf(" of %" PRIu64, dump.truncated_needed);
    std::printf("\n");
  } else {
    std::printf("truncated tail: none\n");
  }
  std::printf("inline records: %" PRIu64 ", functions %" PRIu64 ", inline calls %" PRIu64 ", max depth %" PRIu64 "\n",
              inline_records, functions, calls, max_depth);
  std::printf("problems: %zu errors, %zu warnings%s\n", errors, warnings,
              errors + warnings ? " (see `jitdump check`)" : "");
  return kOk;
}

int List(const Args& args) {
  if (args.help) return std::fputs(kListUsage, stdout), kOk;
  if (args.positional.size() != 1) return Usage(kListUsage, "list takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  std::string out = args.json ? "[" : "";
  bool first = true;
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* load = dump.records[i].load();
    if (load == nullptr) continue;
    const std::string source = SourceRange(dump, i);
    const size_t inlines = InlineCallCount(dump, *load);
    if (args.json) {
      out += std::string(first ? "" : ",") + "\n{\"index\":" + U64(load->code_index) + ",\"addr\":" +
             U64(load->code_addr) + ",\"size\":" + U64(load->code_size) + ",\"name\":" + JsonString(load->name) +
             ",\"source\":" + (source.empty() ? "null" : JsonString(source)) + ",\"inlines\":" + U64(inlines) +
             ",\"offset\":" + U64(dump.records[i].offset) + ",\"timestamp\":" + U64(dump.records[i].timestamp) + "}";
      first = false;
      continue;
    }
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%" PRIu64 " 0x%016" PRIx64 " %" PRIu64 " ", load->code_index,
                  load->code_addr, load->code_size);
    out += buffer;
    out += Shown(load->name);
    if (!source.empty()) out += "  [" + Shown(source) + "]";
    if (inlines != 0) out += " inlines=" + U64(inlines);
    out += "\n";
  }
  if (args.json) out += "\n]\n";
  std::fputs(out.c_str(), stdout);
  return kOk;
}

int Lines(const Args& args) {
  if (args.help) return std::fputs(kLinesUsage, stdout), kOk;
  if (args.positional.size() != 1) return Usage(kLinesUsage, "lines takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  std::string out = args.json ? "[" : "";
  bool first_load = true;
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* load = dump.records[i].load();
    if (load == nullptr || (load->debug_info < 0 && load->inline_info < 0)) continue;
    struct Row {
      uint64_t addr;
      std::string file;
      int64_t line;
      int64_t column;
      const char* source;
    };
    std::vector<Row> rows;
    if (load->debug_info >= 0) {
      if (const DebugInfoBody* d = dump.records[static_cast<size_t>(load->debug_info)].debug_info()) {
        for (const DebugLine& e : d->entries) rows.push_back({e.addr, e.file, e.line, e.discrim, "debug_info"});
      }
    }
    if (load->inline_info >= 0) {
      if (const InlineBody* info = dump.records[static_cast<size_t>(load->inline_info)].inline_info()) {
        for (const SamplyLineRecord& l : info->lines) {
          rows.push_back({load->code_addr + l.code_offset,
                          l.file_index < info->files.size() ? info->files[l.file_index] : "?", l.line_number,
                          l.column_number, "inline"});
        }
      }
    }
    if (args.json) {
      out += std::string(first_load ? "" : ",") + "\n{\"index\":" + U64(load->code_index) + ",\"addr\":" +
             U64(load->code_addr) + ",\"size\":" + U64(load->code_size) + ",\"name\":" + JsonString(load->name) +
             ",\"rows\":[";
      for (size_t k = 0; k < rows.size(); ++k) {
        out += std::string(k ? "," : "") + "{\"addr\":" + U64(rows[k].addr) + ",\"file\":" + JsonString(rows[k].file) +
               ",\"line\":" + std::to_string(rows[k].line) + ",\"column\":" + std::to_string(rows[k].column) +
               ",\"source\":\"" + rows[k].source + "\"}";
      }
      out += "]}";
      first_load = false;
      continue;
    }
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, "load %" PRIu64 " 0x%016" PRIx64 " %" PRIu64 " ", load->code_index,
                  load->code_addr, load->code_size);
    out += buffer + Shown(load->name) + "\n";
    for (const Row& row : rows) {
      std::snprintf(buffer, sizeof buffer, "  0x%016" PRIx64 " +0x%" PRIx64 " ", row.addr, row.addr - load->code_addr);
      out += buffer + Shown(row.file) + ":" + std::to_string(row.line) + (row.source[0] == 'i' ? "  (inline)\n" : "\n");
    }
  }
  if (args.json) out += "\n]\n";
  std::fputs(out.c_str(), stdout);
  return kOk;
}

bool ParseAddress(const std::string& text, uint64_t* value) {
  std::string_view s = text;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *value = v;
  return true;
}

int Addr2line(const Args& args) {
  if (args.help) return std::fputs(kAddr2lineUsage, stdout), kOk;
  if (args.json) return Usage(kAddr2lineUsage, "addr2line has no --json");
  if (args.positional.size() < 2) return Usage(kAddr2lineUsage, "addr2line takes FILE and at least one ADDR");
  std::vector<uint64_t> addrs;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    uint64_t a;
    if (!ParseAddress(args.positional[i], &a)) return Usage(kAddr2lineUsage, "bad address: " + args.positional[i]);
    addrs.push_back(a);
  }
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  JitDump sidecar_dump;
  const SidecarIndex sidecar(LoadSidecar(path, &sidecar_dump) ? &sidecar_dump : nullptr);
  int status = kOk;
  for (uint64_t addr : addrs) {
    const int64_t index = FindLoad(dump, addr);
    if (index < 0) {
      std::printf("0x%" PRIx64 ": not in any CODE_LOAD\n", addr);
      status = kInvalid;
      continue;
    }
    const LoadBody& load = *dump.records[static_cast<size_t>(index)].load();
    std::printf("0x%" PRIx64 ": %s (code_index %" PRIu64 ", 0x%" PRIx64 "+0x%" PRIx64 ", load at offset %" PRIu64 ")\n",
                addr, Shown(load.name).c_str(), load.code_index, load.code_addr, addr - load.code_addr,
                dump.records[static_cast<size_t>(index)].offset);
    const std::vector<InlineFrame> chain = InlineChain(dump, sidecar, static_cast<size_t>(index), addr);
    if (!chain.empty()) {
      for (size_t k = 0; k < chain.size(); ++k) {
        std::printf("  #%zu %s %s:%u%s\n", k, chain[k].function.c_str(), chain[k].file.c_str(), chain[k].line,
                    k == 0 ? "" : "  (caller)");
      }
      continue;
    }
    std::string file;
    uint32_t line = 0;
    if (FindLine(dump, static_cast<size_t>(index), addr, &file, &line)) {
      std::printf("  #0 %s %s:%u\n", Shown(load.name).c_str(), Shown(file).c_str(), line);
    } else {
      std::printf("  #0 %s ??:0\n", Shown(load.name).c_str());
    }
  }
  return status;
}

int CheckCommand(const Args& args) {
  if (args.help) return std::fputs(kCheckUsage, stdout), kOk;
  if (args.positional.size() != 1) return Usage(kCheckUsage, "check takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  const std::vector<Problem> problems = Check(dump);
  size_t errors = 0, warnings = 0;
  for (const Problem& p : problems) (p.severity == Severity::kError ? errors : warnings)++;
  const bool valid = errors == 0;
  if (args.json) {
    std::string out = "{\"file\":" + JsonString(path) + ",\"valid\":" + (valid ? "true" : "false") +
                      ",\"errors\":" + U64(errors) + ",\"warnings\":" + U64(warnings) +
                      ",\"records\":" + U64(dump.records.size()) + ",\"problems\":[";
    for (size_t i = 0; i < problems.size(); ++i) {
      out += std::string(i ? "," : "") + "\n{\"offset\":" + U64(problems[i].offset) + ",\"severity\":\"" +
             SeverityName(problems[i].severity) + "\",\"message\":" + JsonString(problems[i].message) + "}";
    }
    out += "]}\n";
    std::fputs(out.c_str(), stdout);
  } else {
    for (const Problem& p : problems) std::printf("%s\n", FormatProblem(p).c_str());
    std::printf("%s: %s, %zu records, %zu errors, %zu warnings\n", path.c_str(), valid ? "valid" : "INVALID",
                dump.records.size(), errors, warnings);
  }
  return valid ? kOk : kInvalid;
}

int Perfmap(const Args& args) {
  if (args.help) return std::fputs(kPerfmapUsage, stdout), kOk;
  if (args.json) return Usage(kPerfmapUsage, "perfmap has no --json");
  if (args.positional.size() != 1) return Usage(kPerfmapUsage, "perfmap takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  const CodeMap map(dump);
  std::string out;
  for (const auto& [start, span] : map.spans()) {
    AppendPerfMapLine(span.start, span.end - span.start, dump.records[span.record].load()->name, out);
  }
  std::fputs(out.c_str(), stdout);
  return kOk;
}

int Fold(const Args& args) {
  if (args.help) return std::fputs(kFoldUsage, stdout), kOk;
  if (args.json) return Usage(kFoldUsage, "fold has no --json");
  if (args.positional.size() != 1) return Usage(kFoldUsage, "fold takes exactly one FILE (the jitdump)");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  const CodeMap map(dump);
  std::map<std::string, uint64_t> stacks;
  FoldStats stats;
  JitDump sidecar_dump;
  const SidecarIndex sidecar(LoadSidecar(path, &sidecar_dump) ? &sidecar_dump : nullptr);
  FoldPerfScript(std::cin, dump, map, sidecar, stacks, stats);
  std::string out;
  for (const auto& [stack, count] : stacks) out += stack + " " + U64(count) + "\n";
  std::fputs(out.c_str(), stdout);
  std::fprintf(stderr,
               "jitdump fold: %" PRIu64 " samples, %" PRIu64 " JIT frames, %" PRIu64 " expanded inline, %" PRIu64
               " resolved to earlier code by sample time\n",
               stats.samples, stats.jit_frames, stats.expanded_frames, stats.time_resolved);
  return kOk;
}


std::string IndexOrNull(int64_t index) { return index < 0 ? "null" : std::to_string(index); }

int Records(const Args& args) {
  if (args.help) return std::fputs(kRecordsUsage, stdout), kOk;
  if (!args.json) return Usage(kRecordsUsage, "records needs --json");
  if (args.positional.size() != 1) return Usage(kRecordsUsage, "records takes exactly one FILE");
  const std::string& path = args.positional[0];
  JitDump dump;
  if (!Load(path, &dump)) return kUsage;
  if (!RequireHeader(path, dump)) return kInvalid;
  const FileHeader& h = dump.header;
  std::string out = "{\"file\":" + JsonString(path) + ",\"size\":" + U64(dump.file_size) +
                    ",\"cross_endian\":" + (dump.cross_endian ? "true" : "false") + ",\"header\":{\"magic\":" +
                    U64(h.magic) + ",\"version\":" + U64(h.version) + ",\"total_size\":" + U64(h.total_size) +
                    ",\"elf_mach\":" + U64(h.elf_mach) + ",\"pad1\":" + U64(h.pad1) + ",\"pid\":" + U64(h.pid) +
                    ",\"timestamp\":" + U64(h.timestamp) + ",\"flags\":" + U64(h.flags) + "},\"records\":[";
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const Record& r = dump.records[i];
    const bool known = r.id <= 4 || r.id == static_cast<uint32_t>(RecordType::kSamplyDebugInfo2);
    out += std::string(i ? "," : "") + "\n{\"offset\":" + U64(r.offset) + ",\"type\":\"" +
           (known ? RecordTypeName(r.id) : "UNKNOWN") + "\",\"id\":" + U64(r.id) + ",\"total_size\":" +
           U64(r.total_size) + ",\"timestamp\":" + U64(r.timestamp) + ",\"valid\":" + (r.valid ? "true" : "false");
    if (const LoadBody* l = r.load()) {
      out += ",\"load\":{\"pid\":" + U64(l->pid) + ",\"tid\":" + U64(l->tid) + ",\"vma\":" + U64(l->vma) +
             ",\"code_addr\":" + U64(l->code_addr) + ",\"code_size\":" + U64(l->code_size) +
             ",\"code_index\":" + U64(l->code_index) + ",\"name\":" + JsonString(l->name) +
             ",\"code_offset\":" + U64(l->code_offset) + ",\"debug_info\":" + IndexOrNull(l->debug_info) +
             ",\"inline_info\":" + IndexOrNull(l->inline_info) + ",\"unwinding_info\":" +
             IndexOrNull(l->unwinding_info) + "}";
    } else if (const DebugInfoBody* d = r.debug_info()) {
      out += ",\"debug_info\":{\"code_addr\":" + U64(d->code_addr) + ",\"nr_entry\":" + U64(d->nr_entry) +
             ",\"complete\":" + (d->complete ? "true" : "false") + ",\"entries\":[";
      for (size_t k = 0; k < d->entries.size(); ++k) {
        const DebugLine& e = d->entries[k];
        out += std::string(k ? "," : "") + "{\"addr\":" + U64(e.addr) + ",\"line\":" + std::to_string(e.line) +
               ",\"discrim\":" + std::to_string(e.discrim) + ",\"file\":" + JsonString(e.file) + "}";
      }
      out += "]}";
    } else if (const InlineBody* info = r.inline_info()) {
      out += ",\"inline\":{\"files\":[";
      for (size_t k = 0; k < info->files.size(); ++k) out += std::string(k ? "," : "") + JsonString(info->files[k]);
      out += "],\"function_names\":[";
      for (size_t k = 0; k < info->function_names.size(); ++k) {
        out += std::string(k ? "," : "") + JsonString(info->function_names[k]);
      }
      out += "],\"functions\":[";
      for (size_t k = 0; k < info->functions.size(); ++k) {
        const SamplyFunctionRecord& f = info->functions[k];
        out += std::string(k ? "," : "") + "{\"name_index\":" + U64(f.function_name_index) + ",\"file_index\":" +
               U64(f.file_index) + ",\"start_line\":" + U64(f.start_line) + ",\"start_column\":" +
               U64(f.start_column) + ",\"flags\":" + U64(f.flags) + "}";
      }
      out += "],\"calls\":[";
      for (size_t k = 0; k < info->calls.size(); ++k) {
        const SamplyInlineCallRecord& c = info->calls[k];
        out += std::string(k ? "," : "") + "{\"depth\":" + U64(c.depth) + ",\"range_count\":" + U64(c.range_count) +
               ",\"function_index\":" + U64(c.function_index) + ",\"call_line\":" + U64(c.call_line_number) +
               ",\"call_column\":" + U64(c.call_column_number) + "}";
      }
      out += "],\"ranges\":[";
      for (size_t k = 0; k < info->ranges.size(); ++k) {
        out += std::string(k ? "," : "") + "{\"start_offset\":" + U64(info->ranges[k].start_offset) +
               ",\"size\":" + U64(info->ranges[k].size) + "}";
      }
      out += "],\"lines\":[";
      for (size_t k = 0; k < info->lines.size(); ++k) {
        const SamplyLineRecord& l = info->lines[k];
        out += std::string(k ? "," : "") + "{\"code_offset\":" + U64(l.code_offset) + ",\"file_index\":" +
               U64(l.file_index) + ",\"line\":" + U64(l.line_number) + ",\"column\":" + U64(l.column_number) + "}";
      }
      out += "]}";
    } else if (const MoveBody* m = r.move()) {
      out += ",\"move\":{\"pid\":" + U64(m->pid) + ",\"tid\":" + U64(m->tid) + ",\"vma\":" + U64(m->vma) +
             ",\"old_code_addr\":" + U64(m->old_code_addr) + ",\"new_code_addr\":" + U64(m->new_code_addr) +
             ",\"code_size\":" + U64(m->code_size) + ",\"code_index\":" + U64(m->code_index) + "}";
    } else if (const UnwindingBody* u = r.unwinding()) {
      out += ",\"unwinding\":{\"unwind_data_size\":" + U64(u->unwind_data_size) + ",\"eh_frame_hdr_size\":" +
             U64(u->eh_frame_hdr_size) + ",\"mapped_size\":" + U64(u->mapped_size) + "}";
    }
    out += "}";
  }
  out += "\n],\"truncated\":";
  if (dump.truncated_offset) {
    out += "{\"offset\":" + U64(*dump.truncated_offset) + ",\"bytes\":" + U64(dump.truncated_bytes) +
           ",\"total_size\":" + U64(dump.truncated_needed) + "}";
  } else {
    out += "null";
  }
  out += ",\"unknown_records\":" + U64(dump.unknown_records) + "}\n";
  std::fputs(out.c_str(), stdout);
  return kOk;
}

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2) return Usage(kMainUsage, "missing command");
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") return std::fputs(kMainUsage, stdout), kOk;
  if (command == "strip-inline") return StripInlineMain(argc, argv, 2);  // own options (--force)
  const Args args = ParseArgs(argc, argv, 2);
  using Handler = int (*)(const Args&);
  const std::pair<std::string_view, Handler> commands[] = {
      {"info", Info},       {"list", List},       {"lines", Lines}, {"addr2line", Addr2line},
      {"check", CheckCommand}, {"perfmap", Perfmap}, {"fold", Fold},   {"records", Records},
  };
  for (const auto& [name, handler] : commands) {
    if (name != command) continue;
    if (!args.bad_option.empty() && !args.help) {
      return Usage(kMainUsage, "unknown option " + args.bad_option + " for " + std::string(command));
    }
    return handler(args);
  }
  return Usage(kMainUsage, "unknown command " + std::string(command));
}

}  // namespace jitdump::tool

int main(int argc, char** argv) { return jitdump::tool::Main(argc, argv); }
