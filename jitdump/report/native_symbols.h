// The report's NativeSymbols (stack_sample.h) through jitdump/symbols: native and kernel frames
// of a perf.data recording named without perf, the way perf names them (ELF symbols by perf's
// rules, kallsyms for the kernel), with the DWARF inline chain and source line where debug
// information exists. One per report; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "jitdump/perfdata/recording.h"
#include "jitdump/report/stack_sample.h"
#include "jitdump/symbols/symbolizer.h"

namespace jitdump::perfdata {
struct Dso;
}

namespace jitdump::report {

class SymbolizedNames final : public NativeSymbols {
 public:
  // `recording` (its BUILD_ID and OSRELEASE features) must outlive this.
  SymbolizedNames(const perfdata::Recording& recording, symbols::Options options = {});

  // The address of _text the recording saw (the pgoff of its "[kernel.kallsyms]_text" MMAP)
  // and where that MMAP ends: before the first lookup.
  void SetKernelText(uint64_t text_address, uint64_t text_end) {
    kernel_text_ = text_address;
    kernel_text_end_ = text_end;
  }

  // A stream (perf record -o - | jitdump report -) is read while its processes run: a file
  // inside a container's root or one deleted since is found only while its process lives
  // (/proc/PID/root, /proc/PID/map_files), so a stream's frames are looked up when they come
  // (NameDeferred then hands over what was found), a file's after its last sample.
  void set_streaming(bool on) { streaming_ = on; }

  bool Defer(uint32_t pid, const StackFrame& frame, const FrameDso& dso, uint32_t ticket) override;
  // File by file (the kernel's first), by address within each file.
  void NameDeferred(const std::function<void(uint32_t, std::span<const NativeName>)>& each) override;

  // Every file looked up (for summary.json).
  std::vector<symbols::FileReport> Files() const { return symbolizer_.Files(); }

 private:
  void SetKernelOnce();

  // A frame to name: what its mapping said when it was sampled (the mapping may change later;
  // its DSO stays as long as the recording's address spaces, which outlive NameDeferred).
  struct Deferred {
    const perfdata::Dso* dso;
    uint64_t start;
    uint64_t end;
    uint64_t pgoff;
    uint64_t addr;
    uint32_t pid;
    uint32_t ticket;
  };
  // The names at one deferred frame's address into `out`.
  void Lookup(const Deferred& frame, std::vector<NativeName>* out);

  const perfdata::Recording& recording_;
  symbols::Symbolizer symbolizer_;
  std::vector<Deferred> deferred_;
  bool streaming_ = false;
  // What a stream's lookups found: each ticket's names, names_[first_[i], first_[i + 1]) for
  // looked_up_[i]; views into the symbolizer's strings, which stay until NameDeferred releases
  // them after handing these over.
  std::vector<uint32_t> looked_up_;
  std::vector<size_t> first_{0};
  std::vector<NativeName> names_;
  uint64_t kernel_text_ = 0;
  uint64_t kernel_text_end_ = 0;
  bool kernel_set_ = false;
};

}  // namespace jitdump::report
