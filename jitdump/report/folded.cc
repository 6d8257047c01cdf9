#include "jitdump/report/folded.h"

#include <map>
#include <string>

namespace jitdump::report {
namespace {

void AppendName(std::string& stack, std::string_view name) {
  for (char c : name) stack.push_back(c == ';' ? ',' : (c == '\n' || c == '\r') ? ' ' : c);
}

const char* Suffix(FrameKind kind) {
  switch (kind) {
    case FrameKind::kCompiled: return "_[j]";
    case FrameKind::kInlined: return "_[i]";
    case FrameKind::kInterpreted: return "_[0]";
    case FrameKind::kKernel: return "_[k]";
    default: return "";
  }
}

}  // namespace

std::map<std::string, uint64_t> FoldStacks(const Profile& profile, const FoldedOptions& options) {
  std::map<std::string, uint64_t> stacks;
  std::string stack;
  for (const Sample& sample : profile.samples) {
    stack.clear();
    AppendName(stack, sample.thread.empty() ? std::string_view("[unknown]") : std::string_view(sample.thread));
    for (size_t i = sample.locations.size(); i-- > 0;) {
      const Location& location = profile.locations[sample.locations[i]];
      for (size_t k = location.lines.size(); k-- > 0;) {
        const Function& function = profile.functions[location.lines[k].function];
        stack.push_back(';');
        AppendName(stack, function.name);
        if (options.annotate) stack += Suffix(function.kind);
      }
    }
    stacks[stack] += sample.count;
  }
  return stacks;
}

void WriteFolded(const Profile& profile, const FoldedOptions& options, std::ostream& out) {
  for (const auto& [text, count] : FoldStacks(profile, options)) out << text << ' ' << count << '\n';
}

}  // namespace jitdump::report
