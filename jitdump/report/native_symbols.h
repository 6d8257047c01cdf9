// The report's NativeSymbols (stack_sample.h) through jitdump/symbols: native and kernel frames
// of a perf.data recording named without perf, the way perf names them (ELF symbols by perf's
// rules, kallsyms for the kernel), with the DWARF inline chain and source line where debug
// information exists. One per report; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "jitdump/perfdata/recording.h"
#include "jitdump/report/stack_sample.h"
#include "jitdump/symbols/symbolizer.h"

namespace jitdump::report {

class SymbolizedNames final : public NativeSymbols {
 public:
  // `recording` (its BUILD_ID and OSRELEASE features) must outlive this.
  SymbolizedNames(const perfdata::Recording& recording, symbols::Options options = {});

  // The address of _text the recording saw (the pgoff of its "[kernel.kallsyms]_text" MMAP):
  // before the first lookup.
  void SetKernelText(uint64_t text_address) { kernel_text_ = text_address; }

  std::vector<NativeName> Lookup(uint32_t pid, const StackFrame& frame, const FrameDso& dso) override;

  // Every file looked up (for summary.json).
  std::vector<symbols::FileReport> Files() const { return symbolizer_.Files(); }

 private:
  void SetKernelOnce();

  const perfdata::Recording& recording_;
  symbols::Symbolizer symbolizer_;
  uint64_t kernel_text_ = 0;
  bool kernel_set_ = false;
};

}  // namespace jitdump::report
