// The commands of the `jitdump` tool. Each is defined in its own file under commands/; adding
// one is that file, its line in meson.build and its line in kCommands below.
#include "jitdump/tool/command.h"

namespace jitdump::tool {

extern const Command kInfoCommand, kListCommand, kLinesCommand, kAddr2lineCommand, kCheckCommand, kPerfmapCommand,
    kRecordsCommand, kMethodsCommand, kFoldCommand, kStripInlineCommand, kReportCommand, kCopyCommand, kAttachCommand,
    kRunDirCommand, kPerfDataCommand, kRetargetMarkersCommand, kAgentPathCommand;

std::span<const Command* const> AllCommands() {
  // In the order `jitdump --help` lists them.
  static const Command* const kCommands[] = {
      &kInfoCommand,
      &kListCommand,
      &kLinesCommand,
      &kAddr2lineCommand,
      &kCheckCommand,
      &kPerfmapCommand,
      &kRecordsCommand,
      &kMethodsCommand,
      &kFoldCommand,
      &kStripInlineCommand,
      &kReportCommand,
      &kCopyCommand,
      &kAttachCommand,
      &kAgentPathCommand,
      &kRunDirCommand,
      &kPerfDataCommand,
      &kRetargetMarkersCommand,
  };
  return kCommands;
}

}  // namespace jitdump::tool
