// `jitdump strip-inline [--force] FILE`: moves samply's inline records into FILE.inline so perf
// inject stops warning about them (strip_inline.h does the work).
#include <cinttypes>
#include <cstdio>
#include <string>

#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"
#include "jitdump/tool/strip_inline.h"

namespace jitdump::tool {
namespace {

constexpr char kUsage[] =
    "usage: jitdump strip-inline [--force] [--json] FILE\n"
    "Moves samply's inline records (SAMPLY_JIT_CODE_DEBUG_INFO2, written with the agent option\n"
    "inline=on) out of FILE into FILE.inline, so `perf inject --jit` does not warn about them.\n"
    "FILE.inline is a jitdump holding each inline record followed by a copy of its CODE_LOAD;\n"
    "FILE keeps every other record. Both are replaced atomically (written aside, renamed).\n"
    "Refuses a FILE without a final JIT_CODE_CLOSE (its JVM may still be writing) unless --force.\n"
    "exit status: 0 stripped or nothing to strip, 1 invalid, not closed or changed meanwhile,\n"
    "2 usage or I/O error\n";

constexpr OptionSpec kOptions[] = {{"--force", ""}};

void PrintResultJson(const std::string& path, StripStatus status, const StripInlineResult& result,
                     const std::string& error) {
  PrintJson({{"file", path},
             {"sidecar", path + ".inline"},
             {"status", StripStatusName(status)},
             {"inline_records", result.inline_records},
             {"orphan_records", result.orphan_records},
             {"loads_copied", result.loads_copied},
             {"bytes_before", result.bytes_before},
             {"bytes_after", result.bytes_after},
             {"sidecar_bytes", result.sidecar_bytes},
             {"error", error}});
}

void PrintResultText(const std::string& path, StripStatus status, const StripInlineResult& result) {
  if (status == StripStatus::kNothingToDo) {
    std::printf("%s: no inline records, left unchanged\n", path.c_str());
    return;
  }
  std::printf("%s: moved %" PRIu64 " inline records (%" PRIu64 " CODE_LOADs) to %s.inline (%" PRIu64
              " bytes); %s is now %" PRIu64 " bytes (was %" PRIu64 ")\n",
              path.c_str(), result.inline_records, result.loads_copied, path.c_str(), result.sidecar_bytes, path.c_str(),
              result.bytes_after, result.bytes_before);
  if (result.orphan_records != 0) {
    std::printf("%s: dropped %" PRIu64 " inline records with no CODE_LOAD after them\n", path.c_str(),
                result.orphan_records);
  }
}

int Strip(const Invocation& in) {
  const std::string& path = in.operands[0];
  StripInlineResult result;
  std::string error;
  const StripStatus status = StripInline(path, StripInlineOptions{in.Flag("--force")}, &result, &error);
  if (in.json) PrintResultJson(path, status, result, error);
  switch (status) {
    case StripStatus::kOk:
    case StripStatus::kNothingToDo:
      if (!in.json) PrintResultText(path, status, result);
      return kExitOk;
    case StripStatus::kInvalid:
    case StripStatus::kNotClosed:
    case StripStatus::kChanged:
      std::fprintf(stderr, "jitdump strip-inline: %s\n", error.c_str());
      return kExitInvalid;
    case StripStatus::kIoError:
      std::fprintf(stderr, "jitdump strip-inline: %s\n", error.c_str());
      return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace

extern const Command kStripInlineCommand{
    .name = "strip-inline",
    .synopsis = "strip-inline FILE",
    .summary = "move samply inline records into FILE.inline (see its --help)",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .operands = "exactly one FILE",
    .options = kOptions,
    .run = Strip,
};

}  // namespace jitdump::tool
