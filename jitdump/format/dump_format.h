// The jitdump file format as perf 6.1 reads it, plus samply's inline debug-info record.
//
// Every multi-byte field is in the producer's byte order; a reader detects the order from the magic.
// Structs here describe the on-disk layout exactly: each is naturally aligned, has no implicit
// padding, and its size is pinned by a static_assert, so a memcpy of the struct is the encoding.
#pragma once

#include <cstdint>

namespace jitdump {

// "JiTD" read as a native uint32; a reader seeing kMagicSwapped knows the file is cross-endian.
inline constexpr uint32_t kMagic = 0x4A695444;
inline constexpr uint32_t kMagicSwapped = 0x4454694A;

// The specification text says version 2 (it added UNWINDING_INFO), but perf 6.1's reader
// (tools/perf/util/jitdump.c, jit_open) rejects any header version greater than 1 with
// "wrong jitdump version", and V8, .NET and perf's own JVMTI agent all write 1 while still
// emitting UNWINDING_INFO. We write 1: it is what every perf in Debian accepts.
inline constexpr uint32_t kVersion = 1;

// Header flag bit 0: timestamps come from an architecture clock (TSC) instead of CLOCK_MONOTONIC.
// We never set it; perf 6.1 rejects every other bit.
inline constexpr uint64_t kFlagArchTimestamp = 1;

enum class RecordType : uint32_t {
  kCodeLoad = 0,
  kCodeMove = 1,
  kCodeDebugInfo = 2,
  kCodeClose = 3,
  kCodeUnwindingInfo = 4,
  // samply's "SAMPLY_JIT_CODE_DEBUG_INFO2": line table plus inline-call tree for the next load.
  kSamplyDebugInfo2 = 827346259,
};

struct FileHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t total_size;  // perf 6.1 only works when this is exactly sizeof(FileHeader)
  uint32_t elf_mach;
  uint32_t pad1;
  uint32_t pid;
  uint64_t timestamp;
  uint64_t flags;
};
static_assert(sizeof(FileHeader) == 40);

struct RecordHeader {
  uint32_t id;
  uint32_t total_size;  // whole record, header included
  uint64_t timestamp;
};
static_assert(sizeof(RecordHeader) == 16);

// Followed by the NUL-terminated function name, then exactly code_size code bytes
// (perf takes the code from the *end* of the record).
struct CodeLoadFixed {
  RecordHeader header;
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t code_addr;
  uint64_t code_size;
  uint64_t code_index;
};
static_assert(sizeof(CodeLoadFixed) == 56);

struct CodeMoveRecord {
  RecordHeader header;
  uint32_t pid;
  uint32_t tid;
  uint64_t vma;
  uint64_t old_code_addr;
  uint64_t new_code_addr;
  uint64_t code_size;
  uint64_t code_index;
};
static_assert(sizeof(CodeMoveRecord) == 64);

// Followed by nr_entry DebugEntryFixed, each followed by its NUL-terminated file name.
struct DebugInfoFixed {
  RecordHeader header;
  uint64_t code_addr;
  uint64_t nr_entry;
};
static_assert(sizeof(DebugInfoFixed) == 32);

struct DebugEntryFixed {
  uint64_t addr;     // absolute address where this row starts
  int32_t lineno;    // 1-based
  int32_t discrim;   // perf ignores it; samply reads it as a column
};
static_assert(sizeof(DebugEntryFixed) == 16);

struct CloseRecord {
  RecordHeader header;
};
static_assert(sizeof(CloseRecord) == 16);

// Followed by unwind_data_size bytes: .eh_frame_hdr (eh_frame_hdr_size bytes) then .eh_frame.
struct UnwindingInfoFixed {
  RecordHeader header;
  uint64_t unwind_data_size;
  uint64_t eh_frame_hdr_size;
  uint64_t mapped_size;
};
static_assert(sizeof(UnwindingInfoFixed) == 40);

// samply's SAMPLY_JIT_CODE_DEBUG_INFO2 (seed 002): eight counts, then six lists:
// files and function names (NUL-terminated strings padded to a multiple of 4 bytes),
// functions, inline calls (DFS order), ranges (consumed in inline-call order), line records.
struct SamplyDebugInfo2Fixed {
  RecordHeader header;
  uint32_t file_count;
  uint32_t file_list_size;
  uint32_t function_names_count;
  uint32_t function_names_list_size;
  uint32_t function_count;
  uint32_t inline_call_record_count;
  uint32_t range_count;
  uint32_t line_record_count;
};
static_assert(sizeof(SamplyDebugInfo2Fixed) == 48);

struct SamplyFunctionRecord {
  uint32_t function_name_index;
  uint32_t file_index;
  uint32_t start_line;
  uint32_t start_column;
  uint32_t flags;
};
static_assert(sizeof(SamplyFunctionRecord) == 20);

struct SamplyInlineCallRecord {
  uint32_t depth;           // calls made by the outer function have depth 0
  uint32_t range_count;     // >= 1
  uint32_t function_index;  // the callee, an index into the function list
  uint32_t call_line_number;
  uint32_t call_column_number;
};
static_assert(sizeof(SamplyInlineCallRecord) == 20);

struct SamplyRangeRecord {
  uint32_t start_offset;  // relative to the function's code start
  uint32_t size;
};
static_assert(sizeof(SamplyRangeRecord) == 8);

struct SamplyLineRecord {
  uint32_t code_offset;  // relative to the function's code start
  uint32_t file_index;
  uint32_t line_number;
  uint32_t column_number;
};
static_assert(sizeof(SamplyLineRecord) == 16);

}  // namespace jitdump
