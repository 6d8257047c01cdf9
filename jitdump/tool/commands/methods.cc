// `jitdump methods FILE`: a method table (DUMP.methods, written by the agent with interp=on):
// its layout, then one line per METHOD record (Method*, bytecodes, the times it holds, class,
// name, descriptor, line table), and what the table says about itself. What scripts and tests
// read instead of parsing the format; the JSON members are a contract: add, never rename.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "jitdump/read/method_table.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump methods [--json] FILE\n"
    "Prints a method table: the file the agent writes beside jit-PID.dump with interp=on\n"
    "(jit-PID.dump.methods), which names HotSpot's interpreted frames. First the frame layout it\n"
    "states, then one line per method record: its Method*, where its bytecodes lie, from when (and\n"
    "until when) it holds, its class, name and JVM descriptor, and its line table (bci:line); last\n"
    "whether the table was closed and the problems found, with their byte offsets.\n"
    "FILE may also be the dump itself: its table (FILE.methods) is read.\n"
    "exit status: 0 read whole, 1 damaged or not a method table (what could be read is printed)\n";

// Method tables grow with the classes of the JVM; this is far beyond any seen (javac: a few MB).
constexpr uint64_t kMaxTableBytes = 1ull << 30;

Json LinesJson(const TableMethod& m) {
  Json lines = Json::array();
  for (const MethodTableLine& line : m.lines) lines.push_back({line.bci, line.line});
  return lines;
}

int Methods(const Invocation& in) {
  std::string path = in.operands[0];
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".dump") == 0) path = MethodTablePathFor(path);
  MethodTable table;
  std::string error;
  if (!LoadMethodTable(path, kMaxTableBytes, &table, &error)) {
    std::fprintf(stderr, "jitdump: %s: %s\n", Shown(path).c_str(), error.c_str());
    return kExitUsage;
  }
  const bool damaged = !table.header_ok || !table.layout || table.truncated_offset ||
                       std::any_of(table.problems.begin(), table.problems.end(),
                                   [](const Problem& p) { return p.severity == Severity::kError; });
  if (in.json) {
    Json head = {{"file", path}, {"header_ok", table.header_ok}, {"pid", table.header.pid}};
    if (table.layout) {
      const TableLayout& l = *table.layout;
      head["layout"] = {{"jvm_version", l.jvm_version},   {"jvm_feature", l.jvm_feature},
                        {"elf_machine", l.elf_machine},   {"word_size", l.word_size},
                        {"method_slot", l.method_slot},   {"bcp_slot", l.bcp_slot},
                        {"complete_slot", l.complete_slot}, {"bcp_register", l.bcp_register},
                        {"method_register", l.method_register}};
    }
    head["classes"] = table.classes.size();
    Json tail = {{"ended", table.ended}};
    if (table.ended) {
      tail["end"] = {{"classes", table.end_counts.classes},
                     {"methods", table.end_counts.methods},
                     {"retired", table.end_counts.retired},
                     {"methods_lost", table.end_counts.methods_lost}};
    }
    Json problems = Json::array();
    for (const Problem& p : table.problems) {
      problems.push_back({{"offset", p.offset}, {"severity", SeverityName(p.severity)}, {"message", p.message}});
    }
    tail["problems"] = std::move(problems);
    PrintJsonObjectWithArray(std::move(head), "methods", table.methods.size(), [&](size_t i) {
      const TableMethod& m = table.methods[i];
      const TableClass* klass = table.ClassOf(m);
      Json j = {{"serial", m.serial},
                {"method", m.method},
                {"code_base", m.code_base},
                {"code_size", m.code_size},
                {"timestamp", m.timestamp},
                {"native", m.native()},
                {"redefined", (m.flags & kMethodRedefined) != 0},
                {"class", klass != nullptr ? klass->name : ""},
                {"file", klass != nullptr ? klass->file : ""},
                {"name", m.name},
                {"descriptor", m.descriptor},
                {"lines", LinesJson(m)}};
      if (m.retired != UINT64_MAX) j["retired"] = m.retired;
      return j;
    }, std::move(tail));
    return damaged ? kExitInvalid : kExitOk;
  }
  std::printf("file: %s\n", Shown(path).c_str());
  if (table.layout) {
    const TableLayout& l = *table.layout;
    std::printf("jvm: %s (feature %u); Method* at fp%+d words, bcp at fp%+d, frame complete at fp%+d; bcp register "
                "%u, method register %u\n",
                Shown(l.jvm_version).c_str(), l.jvm_feature, l.method_slot, l.bcp_slot, l.complete_slot,
                l.bcp_register, l.method_register);
  }
  std::printf("classes: %zu, methods: %zu\n", table.classes.size(), table.methods.size());
  for (const TableMethod& m : table.methods) {
    const TableClass* klass = table.ClassOf(m);
    std::printf("%#" PRIx64 " %#" PRIx64 "+%u @%" PRIu64, m.method, m.code_base, m.code_size, m.timestamp);
    if (m.retired != UINT64_MAX) std::printf("..%" PRIu64, m.retired);
    std::printf(" %s.%s%s", klass != nullptr ? Shown(klass->name).c_str() : "?", Shown(m.name).c_str(),
                Shown(m.descriptor).c_str());
    if (m.native()) std::printf(" native");
    if (klass != nullptr && !klass->file.empty()) std::printf(" %s", Shown(klass->file).c_str());
    for (const MethodTableLine& line : m.lines) std::printf(" %u:%u", line.bci, line.line);
    std::printf("\n");
  }
  if (table.ended) {
    std::printf("closed: %" PRIu64 " classes, %" PRIu64 " methods, %" PRIu64 " retired, %" PRIu64 " lost\n",
                table.end_counts.classes, table.end_counts.methods, table.end_counts.retired,
                table.end_counts.methods_lost);
  } else {
    std::printf("closed: no (no END record: the JVM is running, or was killed)\n");
  }
  for (const Problem& p : table.problems) std::printf("%s\n", Shown(FormatProblem(p)).c_str());
  return damaged ? kExitInvalid : kExitOk;
}

}  // namespace

extern const Command kMethodsCommand{
    .name = "methods",
    .synopsis = "methods FILE",
    .summary = "a method table (DUMP.methods, interp=on): what names interpreted frames",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .run = Methods,
};

}  // namespace jitdump::tool
