// Unwinds the user stacks `perf record --call-graph dwarf` copies into its samples: from the
// sample's user registers and stack bytes, through the call frame information (.eh_frame,
// .debug_frame) of the files mapped in the process, with elfutils' unwinder (libdwfl, Debian
// libdw-dev), where perf unwinds at report time (Debian's perf 6.1 through libunwind; perf can
// also be built with libdw). Both agree wherever CFI describes the code; past a native frame
// without CFI both guess through rbp and may part (perf-report_dwarf compares up to there).
// Knows nothing of JVMs: unwinding stops at code no mapped file describes,
// which for a JVM is its first JIT frame (that frame is still reported).
//
// Each caller's pc is its return address minus one (inside the call instruction), except for a
// signal frame, as perf's unwinders report them. One libdwfl session per process, rebuilt when
// the process's mappings change; files are opened by the paths the recording names.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/recording.h"
#include "jitdump/perfdata/records.h"

namespace jitdump::unwind {

class DwarfUnwinder {
 public:
  // At most this many frames per sample (perf's default is 127; its --max-stack goes higher).
  static constexpr size_t kMaxFrames = 1024;

  // When the recording's kernel (its HEADER_OSRELEASE, which a stream sends before its samples)
  // is the kernel running here, the vdso of this process stands in for the recorded processes'
  // [vdso] (the same image, as perf assumes too); otherwise unwinding stops in the vdso.
  DwarfUnwinder(perfdata::AddressSpaces& spaces, const perfdata::Recording& recording);
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Whether `sample` carries what unwinding needs (user registers with an ABI, stack bytes).
  static bool CanUnwind(const perfdata::Sample& sample);
  // The user frames of `sample`, innermost first: the interrupted pc, then each caller's.
  // Empty when it cannot start (no registers, no file at the pc).
  void Unwind(const perfdata::Sample& sample, std::vector<uint64_t>* pcs);

  uint64_t sessions() const { return sessions_; }  // libdwfl sessions made (for the tests)

 private:
  struct Session;
  struct Current;
  Session* SessionFor(uint32_t pid);
  // Reports what the process mapped since; false when a reported file was replaced.
  bool Sync(Session& session);

  // This process's vdso copied into a memfd (-1: none, or another kernel's recording).
  int VdsoFile();

  perfdata::AddressSpaces& spaces_;
  const perfdata::Recording& recording_;
  int vdso_fd_ = -2;  // -2: not looked for yet
  std::list<std::unique_ptr<Session>> sessions_lru_;  // most recently used first
  uint64_t sessions_ = 0;
  std::unique_ptr<Current> current_;
};

}  // namespace jitdump::unwind
