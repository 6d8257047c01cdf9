#include "jitdump/report/sample_leaf.h"

#include <string_view>

#include "jitdump/report/classify.h"

namespace jitdump::report {

SampleLeaf LeafOf(const Profile& profile, const Sample& sample) {
  return sample.locations.empty() ? SampleLeaf{} : LeafAt(profile, sample.locations.front());
}

SampleLeaf LeafAt(const Profile& profile, uint32_t location_index) {
  SampleLeaf leaf;
  const Location& location = profile.locations[location_index];
  leaf.mapping = &profile.mappings[location.mapping];
  if (location.lines.empty()) return leaf;
  leaf.function = &profile.functions[location.lines.front().function];
  leaf.line = location.lines.front().line;
  leaf.compiled = &profile.functions[location.lines.back().function];
  return leaf;
}

bool IsUnresolvedJit(const SampleLeaf& leaf) {
  if (leaf.function == nullptr || leaf.function->kind != FrameKind::kUnknown || leaf.mapping == nullptr) return false;
  const std::string_view file = leaf.mapping->file;
  return !file.empty() && file != "[unknown]" && IsJitCandidateDso(file);
}

}  // namespace jitdump::report
