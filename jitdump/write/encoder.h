// Serializes jitdump records into caller-provided memory.
//
// Each record type has a Size() that says exactly how many bytes Encode() will write, so a
// producer can allocate one block, encode several records back to back (DEBUG_INFO, then the
// inline record, then its CODE_LOAD) and hand the finished bytes to a writer thread. Nothing
// here allocates, locks or touches a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "jitdump/format/dump_format.h"

namespace jitdump {

// Largest record we will produce: total_size is a u32 on disk.
inline constexpr uint64_t kMaxRecordSize = UINT32_MAX;

struct FileHeaderFields {
  uint32_t elf_mach = 0;
  uint32_t pid = 0;
  uint64_t timestamp = 0;
  uint64_t flags = 0;
};
FileHeader MakeFileHeader(const FileHeaderFields& fields);

struct CodeLoad {
  uint64_t timestamp = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  uint64_t code_index = 0;
  std::string_view name;        // written up to its first NUL, then NUL-terminated
  const void* code = nullptr;   // code_size bytes, or nullptr to write zeros
};

struct DebugEntry {
  uint64_t addr = 0;
  int32_t line = 0;
  int32_t discrim = 0;
  std::string_view file;
};

struct CodeMove {
  uint64_t timestamp = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t vma = 0;
  uint64_t old_code_addr = 0;
  uint64_t new_code_addr = 0;
  uint64_t code_size = 0;
  uint64_t code_index = 0;
};

struct UnwindingInfo {
  uint64_t timestamp = 0;
  uint64_t eh_frame_hdr_size = 0;
  uint64_t mapped_size = 0;
  std::span<const uint8_t> unwind_data;  // .eh_frame_hdr followed by .eh_frame
};

// The samply inline debug-info record, as views over caller-owned lists.
struct InlineDebugInfo {
  uint64_t timestamp = 0;
  std::span<const std::string_view> files;
  std::span<const std::string_view> function_names;
  std::span<const SamplyFunctionRecord> functions;
  std::span<const SamplyInlineCallRecord> calls;
  std::span<const SamplyRangeRecord> ranges;
  std::span<const SamplyLineRecord> lines;
};

// Sizes in bytes of the encoded record; 0 when the record would exceed kMaxRecordSize.
size_t CodeLoadSize(const CodeLoad& load);
// A CODE_LOAD up to its code bytes (header, fixed fields, name): for a producer that writes the
// code from where it already is (pwritev). 0 when the whole record would exceed kMaxRecordSize.
size_t CodeLoadHeadSize(const CodeLoad& load);
size_t DebugInfoSize(std::span<const DebugEntry> entries);
size_t CodeMoveSize();
size_t UnwindingInfoSize(const UnwindingInfo& info);
size_t CloseSize();
size_t InlineDebugInfoSize(const InlineDebugInfo& info);

// Each writes exactly the matching Size() bytes at `out` and returns the end pointer; call
// only when that Size() is non-zero (zero means the record would exceed the format limit).
uint8_t* EncodeCodeLoad(const CodeLoad& load, uint8_t* out);
// Everything of the CODE_LOAD but its code_size code bytes, which must follow in the file (the
// header's total_size counts them; load.code is not read).
uint8_t* EncodeCodeLoadHead(const CodeLoad& load, uint8_t* out);
// code_addr is the address of the function the entries describe (the next CODE_LOAD's).
uint8_t* EncodeDebugInfo(uint64_t timestamp, uint64_t code_addr, std::span<const DebugEntry> entries,
                         uint8_t* out);
uint8_t* EncodeCodeMove(const CodeMove& move, uint8_t* out);
uint8_t* EncodeUnwindingInfo(const UnwindingInfo& info, uint8_t* out);
uint8_t* EncodeClose(uint64_t timestamp, uint8_t* out);
uint8_t* EncodeInlineDebugInfo(const InlineDebugInfo& info, uint8_t* out);

// Length of a string list as the samply record stores it: each string NUL-terminated,
// the whole list padded with zero bytes to a multiple of four.
size_t PaddedStringListSize(std::span<const std::string_view> strings);

}  // namespace jitdump
