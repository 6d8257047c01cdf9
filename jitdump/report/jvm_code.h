// One JVM's jitdump, loaded to name the JIT frames of its samples: the parsed dump, the inline
// records `jitdump strip-inline` moved to FILE.inline, the method table the agent writes beside
// it with interp=on (FILE.methods: what names interpreted frames), and the time-aware address
// index.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jitdump/read/dump.h"
#include "jitdump/read/method_table.h"
#include "jitdump/read/queries.h"
#include "jitdump/report/load_timeline.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

// A frame of a JIT load's inline chain, innermost first (Location::lines' order): views into
// the dumps, valid as long as the JvmCode.
struct JitLine {
  std::string_view function;  // as the dump spells it: JavaFrameName(function) when `java_name`
  bool java_name = false;
  std::string_view file;
  uint32_t line = 0;
  FrameKind kind = FrameKind::kUnknown;
};

// The memory the dumps of one report may take once decoded, in bytes, and what they take so far.
// A JVM's owner decides how large its dump grows; the report reading it (as root, say) stops at
// this budget instead.
struct DumpBudget {
  uint64_t limit = 0;  // 0: no limit
  uint64_t used = 0;
  // What is left of a limited budget.
  uint64_t Left() const { return limit - std::min(used, limit); }
  // The memory limit to hand the decoder (ParseFile, DecodeDeferred), for which 0 means no
  // limit: a spent budget is 1 byte.
  uint64_t DecoderLimit() const { return limit == 0 ? 0 : std::max<uint64_t>(Left(), 1); }
  // Dumps and sidecars kept open to decode their side records when first needed. Past
  // kMaxKeptOpen a file is decoded whole at once and closed, so that a report on a recording of
  // hundreds of JVMs stays well inside the usual limit of 1,024 open files.
  static constexpr uint32_t kMaxKeptOpen = 256;
  uint32_t kept_open = 0;
};

class JvmCode {
 public:
  // Reads and parses `path` (and `path`.inline when present) as files their owner controls
  // (untrusted_file.h): no symlink followed, nothing but a regular file, read through a window
  // (ParseFile), never more than the budget left. Their DEBUG_INFO and inline records are
  // decoded only when Chain first needs them (most loads are never sampled), from the files
  // kept open (up to DumpBudget::kMaxKeptOpen of them), and charged to `budget` then (which must
  // outlive the JvmCode). Fails when the file cannot be read, is not a jitdump or does not fit
  // the budget; `error` says why, naming the path (escaped) and never showing the file's bytes.
  // *identity is the file's (device, inode) when it could be opened.
  static std::unique_ptr<JvmCode> Load(const std::string& path, DumpBudget* budget, std::string* error,
                                       std::pair<uint64_t, uint64_t>* identity = nullptr);
  // The same for a dump already parsed from `path` (its sidecar is read here, within `budget`
  // when given).
  static std::unique_ptr<JvmCode> FromDump(const std::string& path, JitDump dump, DumpBudget* budget = nullptr);
  ~JvmCode();
  JvmCode(const JvmCode&) = delete;
  JvmCode& operator=(const JvmCode&) = delete;

  const std::string& path() const { return path_; }
  const JitDump& dump() const { return dump_; }
  uint32_t header_pid() const { return dump_.header.pid; }
  // The address range the loads span (for the profile's mapping).
  uint64_t low() const { return low_; }
  uint64_t high() const { return high_; }

  LoadTimeline& timeline() { return timeline_; }

  // FILE.methods, when it was there and is a method table; null otherwise.
  const MethodTable* methods() const { return methods_.get(); }

  // For a frame in a jitted-<pid>-<code_index>.so that `perf inject --jit` wrote: the load
  // record and the absolute address. perf prints the ip either absolute or relative to the ELF,
  // whose text starts at 0x80 (perf's GEN_ELF_TEXT_OFFSET). -1 when no load has that index or
  // the ip lies outside its code.
  int64_t LoadOfJittedElf(uint64_t code_index, uint64_t* addr) const;

  // The inline chain at `addr` inside the load at records[record]: from its inline record
  // (in the dump or the sidecar) when it has one; else one frame, the load itself, with the
  // DEBUG_INFO line at `addr` (the innermost inlined frame's line, in that frame's file);
  // stubs and the interpreter have no line.
  const std::vector<JitLine>& Chain(size_t record, uint64_t addr);
  // Whether Chain(record, ...) comes from an inline record.
  bool HasInlineRecord(size_t record) const;
  // Side records Chain could not decode when it needed them (over the budget, or their file
  // shrank): their loads' frames have no line or inline chain.
  uint64_t undecoded() const { return undecoded_; }

 private:
  explicit JvmCode(std::string path, JitDump dump, std::unique_ptr<JitDump> sidecar);
  // Decodes the deferred side records of dump.records[load_index] from `fd`, within budget_:
  // its inline record, and its DEBUG_INFO when FindLine would read it.
  void DecodeSideRecords(JitDump& dump, int fd, size_t load_index);
  // Decodes dump.records[index] (-1: none) when it is deferred.
  void Decode(JitDump& dump, int fd, int64_t index);
  // The sidecar's copy of the load at records[record] (SidecarIndex::Match, asked once per load).
  int64_t SidecarCopy(size_t record) const;

  std::string path_;
  JitDump dump_;
  std::unique_ptr<JitDump> sidecar_dump_;  // stable address: sidecar_ points at it
  std::unique_ptr<MethodTable> methods_;
  SidecarIndex sidecar_;
  LoadTimeline timeline_;
  std::unordered_map<uint64_t, size_t> by_code_index_;
  // SidecarCopy's answers by load record (filled on first use); kNotMatched: not asked yet.
  static constexpr int64_t kNotMatched = -2;
  mutable std::vector<int64_t> sidecar_copies_;
  // Chain's inline chain, reused from call to call (a JvmCode is used by one thread).
  mutable std::vector<InlineFrameView> chain_scratch_;
  std::vector<JitLine> lines_scratch_;  // Chain's answer
  uint64_t low_ = 0;
  uint64_t high_ = 0;
  // The dump and its sidecar, open for their deferred records (-1: none, or all decoded).
  int dump_fd_ = -1;
  int sidecar_fd_ = -1;
  DumpBudget* budget_ = nullptr;
  uint64_t undecoded_ = 0;
};

}  // namespace jitdump::report
