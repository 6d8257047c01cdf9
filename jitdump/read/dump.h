// A jitdump as the read half hands it out: the header and every record decoded to host byte
// order, in file order, each CODE_LOAD linked to the side records (DEBUG_INFO, samply's inline
// record, UNWINDING_INFO) that apply to it, plus what the decoder could not read. Names and file
// names are copies, so a JitDump outlives the bytes it was decoded from; code bytes are not
// copied (a load gives their offset in the file).
//
// Parse (decoder.h) builds one; Check (consumer_rules.h) and the queries (queries.h) read it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "jitdump/format/dump_format.h"
#include "jitdump/read/problem.h"

namespace jitdump {

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
  // subtree_end[i] = index of the first call after call i's own inlined calls (the next one no
  // deeper than it; calls.size() for none), so that a walk skips what a call does not contain.
  std::vector<uint32_t> subtree_end;
  // Every call has ranges, each call's ranges ascend by start, and each call's siblings come in
  // the order of their first range's start (as this agent writes them: inline_tree.h). A walk
  // then stops reading a call's ranges at the first that starts past the offset, and leaves a
  // call's remaining siblings at the first that does: none of them can hold it.
  bool ordered = false;
  uint32_t max_depth = 0;  // deepest inline nesting (1 = calls made by the outer function)
};

struct Record {
  uint64_t offset = 0;  // of the record header
  uint32_t id = 0;
  uint32_t total_size = 0;
  uint64_t timestamp = 0;
  bool valid = true;  // false when the body could not be decoded (see the problems)
  // A DEBUG_INFO or inline record left undecoded (FileLimits::defer_side_records): its body is
  // empty until DecodeDeferred decodes it from the file.
  bool deferred = false;
  // The inline record's body is boxed: it is four times the size of the others, and a dump's
  // records are mostly loads and DEBUG_INFO.
  std::variant<std::monostate, LoadBody, MoveBody, DebugInfoBody, UnwindingBody, std::unique_ptr<InlineBody>> body;

  const LoadBody* load() const { return std::get_if<LoadBody>(&body); }
  const MoveBody* move() const { return std::get_if<MoveBody>(&body); }
  const DebugInfoBody* debug_info() const { return std::get_if<DebugInfoBody>(&body); }
  const UnwindingBody* unwinding() const { return std::get_if<UnwindingBody>(&body); }
  const InlineBody* inline_info() const {
    const auto* box = std::get_if<std::unique_ptr<InlineBody>>(&body);
    return box != nullptr ? box->get() : nullptr;
  }
};

// "CODE_LOAD", "DEBUG_INFO", "SAMPLY_DEBUG_INFO2", ..., "UNKNOWN" for any other id.
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

}  // namespace jitdump
