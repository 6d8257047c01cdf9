#include "jitdump/report/native_symbols.h"

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::report {

SymbolizedNames::SymbolizedNames(const perfdata::Recording& recording, symbols::Options options)
    : recording_(recording), symbolizer_(std::move(options)) {}

void SymbolizedNames::SetKernelOnce() {
  if (kernel_set_) return;
  kernel_set_ = true;
  symbols::Kernel kernel;
  for (const perfdata::BuildIdEntry& entry : recording_.features.build_ids) {
    if (entry.filename == "[kernel.kallsyms]") kernel.build_id = entry.id;
  }
  kernel.text_address = kernel_text_;
  kernel.os_release = recording_.features.os_release;
  symbolizer_.SetRecordingKernel(kernel);
}

std::vector<NativeName> SymbolizedNames::Lookup(uint32_t pid, const StackFrame& frame, const FrameDso& dso) {
  std::vector<NativeName> out;
  const perfdata::Mapping* mapping = frame.mapping;
  if (dso.none || mapping == nullptr || mapping->dso == nullptr) return out;
  SetKernelOnce();
  symbols::Lookup found;
  switch (mapping->dso->kind) {
    case perfdata::DsoKind::kKernel:
    case perfdata::DsoKind::kModule:
      found = symbolizer_.FindKernel(frame.addr);
      break;
    case perfdata::DsoKind::kFile:
    case perfdata::DsoKind::kVdso: {
      symbols::Mapping m;
      m.path = mapping->dso->path;
      m.build_id = mapping->dso->build_id;
      m.start = mapping->start;
      m.end = mapping->end;
      m.pgoff = mapping->pgoff;
      m.pid = pid;
      found = symbolizer_.Find(m, frame.addr);
      break;
    }
    default:
      return out;  // anonymous memory (JIT code: the dumps name it), [heap], [stack]
  }
  if (found.outcome != symbols::Outcome::kSymbol) return out;
  for (const symbols::Frame& f : found.frames) {
    if (f.function.empty()) return {};
    out.push_back(NativeName{std::string(f.function), std::string(f.file), f.line});
  }
  return out;
}

}  // namespace jitdump::report
