#include "jitdump/report/stack_sample.h"

#include "jitdump/report/classify.h"

namespace jitdump::report {

DsoTable::DsoTable() { Intern(""); }

uint32_t DsoTable::Intern(std::string_view name) {
  const auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  auto dso = std::make_unique<FrameDso>();
  dso->name.assign(name);
  dso->none = name.empty() || name == "[unknown]";
  dso->kernel = !dso->none && IsKernelFrame(0, name);
  dso->jit_candidate = !dso->kernel && IsJitCandidateDso(name);
  dso->jitted_elf = JittedElfIndex(name, &dso->jitted_index);
  const uint32_t id = static_cast<uint32_t>(dsos_.size());
  dsos_.push_back(std::move(dso));
  ids_.emplace(std::string_view(dsos_.back()->name), id);
  return id;
}

}  // namespace jitdump::report
