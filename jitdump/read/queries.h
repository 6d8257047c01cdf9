// Questions tools ask of a decoded dump: which load covers an address (now, or at a sample's
// time), its source line there, its inline chain, its source range, and where `jitdump
// strip-inline` moved its inline record. Every query tolerates what the decoder let through
// (invalid records, out-of-range indexes): it answers "unknown", never reads out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/read/dump.h"

namespace jitdump {

// The load (index into records) whose code covers `addr` in the file's final state: the latest
// CODE_LOAD covering it, or -1.
int64_t FindLoad(const JitDump& dump, uint64_t addr);

// The load covering `addr` at time `timestamp`: the latest CODE_LOAD in file order that covers
// it and whose record timestamp is <= timestamp, or -1. (Records need not be in timestamp
// order; file order decides between loads that both qualify.) O(records).
int64_t FindLoadAt(const JitDump& dump, uint64_t addr, uint64_t timestamp);

// The final state of the address space: for every address, the latest load covering it
// (later loads split or hide earlier ones).
class CodeMap {
 public:
  struct Span {
    uint64_t start = 0;
    uint64_t end = 0;   // exclusive
    size_t record = 0;  // index into JitDump::records of the CODE_LOAD
  };
  explicit CodeMap(const JitDump& dump);
  int64_t Find(uint64_t addr) const;  // record index or -1
  const std::map<uint64_t, Span>& spans() const { return spans_; }

 private:
  std::map<uint64_t, Span> spans_;
};

// Source location of `addr` inside the load at records[load_index]: from the inline record's
// line records when present, else from DEBUG_INFO. Returns false when unknown.
bool FindLine(const JitDump& dump, size_t load_index, uint64_t addr, std::string* file, uint32_t* line);
// The same with the file as a view into `dump` (valid as long as it is).
bool FindLine(const JitDump& dump, size_t load_index, uint64_t addr, std::string_view* file, uint32_t* line);

struct InlineFrame {
  std::string function;
  std::string file;
  uint32_t line = 0;  // 0 = unknown
};

// An InlineFrame whose names are views into the dump (valid as long as it is): what a caller
// that makes its own strings of them reads, without copies in between.
struct InlineFrameView {
  std::string_view function;
  std::string_view file;
  uint32_t line = 0;  // 0 = unknown
};

// Inline chain at `addr`, innermost first, ending with the outer function. Empty when the load
// has no inline record.
std::vector<InlineFrame> InlineChain(const JitDump& dump, size_t load_index, uint64_t addr);
// The same into `frames` (cleared first), as views.
void InlineChain(const JitDump& dump, size_t load_index, uint64_t addr, std::vector<InlineFrameView>* frames);

// `jitdump strip-inline` moves the samply inline records into a sidecar dump (FILE.inline): a
// header, then each moved record followed by a byte copy of the CODE_LOAD it describes. This
// index finds, for a load of the main dump, its copy in the sidecar (same code_index,
// code_addr, code_size and timestamp).
class SidecarIndex {
 public:
  SidecarIndex() = default;
  explicit SidecarIndex(const JitDump* sidecar);
  int64_t Match(const JitDump& dump, size_t load_index) const;  // sidecar record index or -1
  const JitDump* sidecar() const { return sidecar_; }

 private:
  const JitDump* sidecar_ = nullptr;
  std::unordered_map<uint64_t, std::vector<size_t>> by_code_index_;
};

// InlineChain from the load's own inline record, else from its copy in the sidecar.
std::vector<InlineFrame> InlineChain(const JitDump& dump, const SidecarIndex& sidecar, size_t load_index,
                                     uint64_t addr);
void InlineChain(const JitDump& dump, const SidecarIndex& sidecar, size_t load_index, uint64_t addr,
                 std::vector<InlineFrameView>* frames);

// "File.java:12-40" for the load's source range, from the inline record or DEBUG_INFO; the file
// alone when no line is known; empty when unknown.
std::string SourceRange(const JitDump& dump, size_t load_index);

}  // namespace jitdump
