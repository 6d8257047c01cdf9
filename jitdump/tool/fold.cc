#include "jitdump/tool/fold.h"

#include <string>

#include "jitdump/report/folded.h"
#include "jitdump/report/profile_reader.h"

namespace jitdump::tool {

void FoldPerfScript(std::istream& in, std::unique_ptr<report::JvmCode> dump, std::map<std::string, uint64_t>& stacks,
                    FoldStats& stats) {
  report::ReadOptions options;
  options.every_event = true;  // whatever perf script was asked to print, every sample counts
  report::ProfileReader reader(std::move(dump), options);
  report::ScriptParser parser(reader);
  for (std::string line; std::getline(in, line);) parser.Feed(line);
  parser.Finish();
  const report::ReadStats& read = reader.stats();
  stats.samples += read.samples;
  stats.jit_frames += read.jit_resolved;
  stats.expanded_frames += read.jit_expanded;
  stats.time_resolved += read.jit_time_resolved;
  stats.before_load += read.jit_before_load;
  for (auto& [stack, count] : report::FoldStacks(reader.Take(), report::FoldedOptions{})) stacks[stack] += count;
}

}  // namespace jitdump::tool
