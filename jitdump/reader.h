// A validating jitdump reader: parses a whole file held in memory into records, never trusting
// a length it has not checked against the record's total_size and the bytes available.
//
// Parse() decodes; every defect it meets becomes a Problem (byte offset + severity + text).
// Check() adds the rules perf 6.1 applies when it consumes a dump (header size, version,
// flags, DEBUG_INFO placement and ordering, unique code_index, one clock) and the samply
// inline-record rules that need the following CODE_LOAD.
//
// No exceptions, no globals, no allocation sized by an unchecked count.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "jitdump/format.h"
#include "jitdump/status.h"

namespace jitdump {

enum class Severity { kWarning, kError };

struct Problem {
  uint64_t offset = 0;  // byte offset in the file the problem is about
  Severity severity = Severity::kError;
  std::string message;
};

const char* SeverityName(Severity severity);
// "offset 1234 (0x4d2): error: ..."
std::string FormatProblem(const Problem& problem);

struct DebugLine {
  uint64_t addr = 0;
  int32_t line = 0;
  int32_t discrim = 0;
  std::string file;
};

struct LoadBody {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  uint64_t code_index = 0;
  std::string name;
  uint64_t code_offset = 0;  // file offset of the code bytes (the record's last code_size bytes)
  // Indexes into JitDump::records of the side records that apply to this load (the ones since
  // the previous load), or -1.
  int64_t debug_info = -1;
  int64_t inline_info = -1;
  int64_t unwinding_info = -1;
};

struct MoveBody {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t old_code_addr = 0;
  uint64_t new_code_addr = 0;
  uint64_t code_size = 0;
  uint64_t code_index = 0;
};

struct DebugInfoBody {
  uint64_t code_addr = 0;
  uint64_t nr_entry = 0;
  std::vector<DebugLine> entries;  // the entries that could be decoded inside the record
  bool complete = true;            // false when parsing by nr_entry left the record
};

struct UnwindingBody {
  uint64_t unwind_data_size = 0;
  uint64_t eh_frame_hdr_size = 0;
  uint64_t mapped_size = 0;
};

// samply's SAMPLY_JIT_CODE_DEBUG_INFO2, decoded to host byte order.
struct InlineBody {
  std::vector<std::string> files;
  std::vector<std::string> function_names;
  std::vector<SamplyFunctionRecord> functions;
  std::vector<SamplyInlineCallRecord> calls;
  std::vector<SamplyRangeRecord> ranges;
  std::vector<SamplyLineRecord> lines;
  // range_begin[i] = index of call i's first range in `ranges` (size calls.size()).
  std::vector<uint32_t> range_begin;
  uint32_t max_depth = 0;  // deepest inline nesting (1 = calls made by the outer function)
};

struct Record {
  uint64_t offset = 0;  // of the record header
  uint32_t id = 0;
  uint32_t total_size = 0;
  uint64_t timestamp = 0;
  bool valid = true;  // false when the body could not be decoded (see the problems)
  std::variant<std::monostate, LoadBody, MoveBody, DebugInfoBody, UnwindingBody, InlineBody> body;

  const LoadBody* load() const { return std::get_if<LoadBody>(&body); }
  const MoveBody* move() const { return std::get_if<MoveBody>(&body); }
  const DebugInfoBody* debug_info() const { return std::get_if<DebugInfoBody>(&body); }
  const UnwindingBody* unwinding() const { return std::get_if<UnwindingBody>(&body); }
  const InlineBody* inline_info() const { return std::get_if<InlineBody>(&body); }
};

const char* RecordTypeName(uint32_t id);

struct JitDump {
  bool header_ok = false;   // false: the file is not a jitdump we can read at all
  bool cross_endian = false;
  FileHeader header{};      // host byte order
  uint64_t file_size = 0;
  uint64_t records_offset = 0;  // where the first record starts (header.total_size, checked)
  std::vector<Record> records;
  uint64_t unknown_records = 0;
  // A final record cut short (what a killed process leaves): its offset and bytes present.
  std::optional<uint64_t> truncated_offset;
  uint64_t truncated_bytes = 0;
  uint64_t truncated_needed = 0;  // its total_size when the 16-byte prefix was present, else 0
  std::vector<Problem> problems;  // decoding problems, in file order

  bool HasErrors() const;
};

// Decodes `data` (the whole file).
JitDump Parse(std::span<const uint8_t> data);

// Length in bytes (1-4) of the well-formed UTF-8 sequence starting at s[i], 0 when the bytes
// there are not UTF-8 (or the sequence is cut off by the end of `s`).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// Reads `path` whole into `out`.
Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out);

// The decoding problems plus everything perf 6.1 and samply would object to, sorted by offset.
std::vector<Problem> Check(const JitDump& dump);

// ---- queries shared by the CLI ----

struct InlineFrame {
  std::string function;
  std::string file;
  uint32_t line = 0;  // 0 = unknown
};

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

// Inline chain at `addr`, innermost first, ending with the outer function. Empty when the load
// has no inline record.
std::vector<InlineFrame> InlineChain(const JitDump& dump, size_t load_index, uint64_t addr);

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

// "File.java:12-40" for the load's source range, from the inline record or DEBUG_INFO; empty
// when unknown.
std::string SourceRange(const JitDump& dump, size_t load_index);

}  // namespace jitdump
