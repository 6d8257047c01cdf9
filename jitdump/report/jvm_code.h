// One JVM's jitdump, loaded to name the JIT frames of its samples: the parsed dump, the inline
// records `jitdump strip-inline` moved to FILE.inline, and the time-aware address index.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitdump/read/dump.h"
#include "jitdump/read/queries.h"
#include "jitdump/report/load_timeline.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

// A frame of a JIT load's inline chain, innermost first (Location::lines' order).
struct JitLine {
  std::string function;
  std::string file;
  uint32_t line = 0;
  FrameKind kind = FrameKind::kUnknown;
};

class JvmCode {
 public:
  // Reads and parses `path` (and `path`.inline when present). Fails when the file cannot be
  // read or is not a jitdump; `error` says why.
  static std::unique_ptr<JvmCode> Load(const std::string& path, std::string* error);
  // The same for a dump already parsed from `path` (its sidecar is read here).
  static std::unique_ptr<JvmCode> FromDump(const std::string& path, JitDump dump);

  const std::string& path() const { return path_; }
  const JitDump& dump() const { return dump_; }
  uint32_t header_pid() const { return dump_.header.pid; }
  // The address range the loads span (for the profile's mapping).
  uint64_t low() const { return low_; }
  uint64_t high() const { return high_; }

  LoadTimeline& timeline() { return timeline_; }

  // For a frame in a jitted-<pid>-<code_index>.so that `perf inject --jit` wrote: the load
  // record and the absolute address. perf prints the ip either absolute or relative to the ELF,
  // whose text starts at 0x80 (perf's GEN_ELF_TEXT_OFFSET). -1 when no load has that index or
  // the ip lies outside its code.
  int64_t LoadOfJittedElf(uint64_t code_index, uint64_t* addr) const;

  // The inline chain at `addr` inside the load at records[record]: from its inline record
  // (in the dump or the sidecar) when it has one; else one frame, the load itself, with the
  // DEBUG_INFO line at `addr` (the innermost inlined frame's line, in that frame's file);
  // stubs and the interpreter have no line.
  std::vector<JitLine> Chain(size_t record, uint64_t addr) const;
  // Whether Chain(record, ...) comes from an inline record.
  bool HasInlineRecord(size_t record) const;

 private:
  explicit JvmCode(std::string path, JitDump dump, std::unique_ptr<JitDump> sidecar);

  std::string path_;
  JitDump dump_;
  std::unique_ptr<JitDump> sidecar_dump_;  // stable address: sidecar_ points at it
  SidecarIndex sidecar_;
  LoadTimeline timeline_;
  std::unordered_map<uint64_t, size_t> by_code_index_;
  uint64_t low_ = 0;
  uint64_t high_ = 0;
};

}  // namespace jitdump::report
