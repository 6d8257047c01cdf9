// `jitdump fold FILE < perf-script`: folded stacks from `perf script` text, JIT frames named from
// the dump and expanded into their inline chains (fold.h does the folding, with the report
// library's parser and frame resolution).
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "jitdump/report/jvm_code.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/fold.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump fold FILE < perf-script-output\n"
    "Reads `perf script` text on stdin and prints folded stacks \"comm;outer;...;inner COUNT\",\n"
    "one per distinct stack, sorted. Accepted input:\n"
    "  - callchains (perf record -g), default `perf script` or `perf script -F comm,pid,tid,ip,sym`\n"
    "    (any fields, as long as the header line holds comm then pid or pid/tid, and each frame is\n"
    "    an indented line \"ADDR [SYM[+0xOFF]] [(DSO)]\"); samples are separated by blank lines;\n"
    "  - single frames without -g: \"comm pid[/tid] [time:] [period event:] ADDR SYM [(DSO)]\" on one\n"
    "    line (perf script's flat output, comm padded on the left).\n"
    "A frame whose DSO is absent, [unknown], a perf map, a jitted-*.so or anonymous memory and whose\n"
    "address lies in a CODE_LOAD of FILE is a JIT frame: with a DEBUG_INFO2 record it becomes its\n"
    "inline chain outermost -> innermost; otherwise it keeps perf's symbol (the load's name if perf\n"
    "said [unknown]). Other frames keep perf's symbol. ';' in names becomes ','. Inline records\n"
    "moved to FILE.inline by `jitdump strip-inline` are used when that file exists.\n"
    "When the header line carries perf's time field (SECONDS.FRACTION:, as in the default output;\n"
    "record with -k mono so it is the dump's clock), a frame older than the code now at its address\n"
    "maps to the latest load that existed at that time (code cache addresses are reused); a frame\n"
    "older than every load covering it maps to the first of them (code a late attach replays).\n"
    "The first frame is looked up at its address, callers one byte before their return address\n"
    "(inside the call instruction). `jitdump report` does all this for a whole perf.data.\n";

int Fold(const Invocation& in) {
  const std::string& path = in.operands[0];
  JitDump dump;
  if (const int status = LoadReadableDump(path, &dump); status != kExitOk) return status;
  std::map<std::string, uint64_t> stacks;
  FoldStats stats;
  // JvmCode::FromDump also takes PATH.inline, the records `jitdump strip-inline` moved there.
  FoldPerfScript(std::cin, report::JvmCode::FromDump(path, std::move(dump)), stacks, stats);
  std::string out;
  for (const auto& [stack, count] : stacks) out += stack + " " + std::to_string(count) + "\n";
  std::fputs(out.c_str(), stdout);
  std::fprintf(stderr,
               "jitdump fold: %" PRIu64 " samples, %" PRIu64 " JIT frames, %" PRIu64 " expanded inline, %" PRIu64
               " resolved to earlier code by sample time, %" PRIu64 " older than their code's load\n",
               stats.samples, stats.jit_frames, stats.expanded_frames, stats.time_resolved, stats.before_load);
  return kExitOk;
}

}  // namespace

extern const Command kFoldCommand{
    .name = "fold",
    .synopsis = "fold FILE",
    .summary = "fold `perf script` output on stdin into stacks, expanding inlined JIT frames",
    .usage = kUsage,
    .operands = "exactly one FILE (the jitdump)",
    .run = Fold,
};

}  // namespace jitdump::tool
