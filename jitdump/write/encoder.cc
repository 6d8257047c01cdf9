// Record encoding (encoder.h): each record type's exact size and its bytes, written into
// caller-provided memory with no allocation.
#include "jitdump/write/encoder.h"

#include <cstring>

namespace jitdump {
namespace {

// A name or file is stored up to its first NUL: the format has no way to carry one inside.
size_t CStringLength(std::string_view s) {
  const size_t nul = s.find('\0');
  return nul == std::string_view::npos ? s.size() : nul;
}

uint8_t* Put(uint8_t* out, const void* data, size_t size) {
  if (size != 0) std::memcpy(out, data, size);
  return out + size;
}

uint8_t* PutCString(uint8_t* out, std::string_view s) {
  out = Put(out, s.data(), CStringLength(s));
  *out = 0;
  return out + 1;
}

uint8_t* PutZeros(uint8_t* out, size_t size) {
  if (size != 0) std::memset(out, 0, size);
  return out + size;
}

RecordHeader MakeRecordHeader(RecordType type, size_t size, uint64_t timestamp) {
  return RecordHeader{static_cast<uint32_t>(type), static_cast<uint32_t>(size), timestamp};
}

size_t Checked(uint64_t size) { return size > kMaxRecordSize ? 0 : static_cast<size_t>(size); }

}  // namespace

FileHeader MakeFileHeader(const FileHeaderFields& fields) {
  FileHeader header{};
  header.magic = kMagic;
  header.version = kVersion;
  header.total_size = sizeof(FileHeader);
  header.elf_mach = fields.elf_mach;
  header.pid = fields.pid;
  header.timestamp = fields.timestamp;
  header.flags = fields.flags;
  return header;
}

size_t CodeLoadSize(const CodeLoad& load) {
  return Checked(uint64_t{sizeof(CodeLoadFixed)} + CStringLength(load.name) + 1 + load.code_size);
}

size_t CodeLoadHeadSize(const CodeLoad& load) {
  return CodeLoadSize(load) == 0 ? 0 : sizeof(CodeLoadFixed) + CStringLength(load.name) + 1;
}

uint8_t* EncodeCodeLoad(const CodeLoad& load, uint8_t* out) {
  out = EncodeCodeLoadHead(load, out);
  return load.code != nullptr ? Put(out, load.code, load.code_size) : PutZeros(out, load.code_size);
}

uint8_t* EncodeCodeLoadHead(const CodeLoad& load, uint8_t* out) {
  CodeLoadFixed fixed{};
  const size_t name_length = CStringLength(load.name);
  fixed.header = MakeRecordHeader(RecordType::kCodeLoad, sizeof(CodeLoadFixed) + name_length + 1 + load.code_size,
                                  load.timestamp);
  fixed.pid = load.pid;
  fixed.tid = load.tid;
  fixed.vma = load.vma;
  fixed.code_addr = load.code_addr;
  fixed.code_size = load.code_size;
  fixed.code_index = load.code_index;
  out = Put(out, &fixed, sizeof fixed);
  out = Put(out, load.name.data(), name_length);
  *out++ = 0;
  return out;
}

namespace {

// Length of each entry's file name up to its first NUL. Neighbouring entries mostly name the
// very same string (one method's file), so its length is reused instead of scanned again.
class FileLengths {
 public:
  size_t operator()(std::string_view file) {
    if (file.data() != last_.data() || file.size() != last_.size()) {
      last_ = file;
      length_ = CStringLength(file);
    }
    return length_;
  }

 private:
  std::string_view last_;
  size_t length_ = 0;
};

}  // namespace

size_t DebugInfoSize(std::span<const DebugEntry> entries) {
  uint64_t size = sizeof(DebugInfoFixed);
  FileLengths length_of;
  for (const DebugEntry& entry : entries) size += sizeof(DebugEntryFixed) + length_of(entry.file) + 1;
  return Checked(size);
}

uint8_t* EncodeDebugInfo(uint64_t timestamp, uint64_t code_addr, std::span<const DebugEntry> entries,
                         uint8_t* out) {
  // The entries go first and the header last: its size is where they ended, which saves a
  // second pass over every file name (DebugInfoSize already made one, in the caller).
  uint8_t* const start = out;
  out += sizeof(DebugInfoFixed);
  FileLengths length_of;
  for (const DebugEntry& entry : entries) {
    const DebugEntryFixed e{entry.addr, entry.line, entry.discrim};
    out = Put(out, &e, sizeof e);
    out = Put(out, entry.file.data(), length_of(entry.file));
    *out++ = 0;
  }
  DebugInfoFixed fixed{};
  fixed.header = MakeRecordHeader(RecordType::kCodeDebugInfo, static_cast<size_t>(out - start), timestamp);
  fixed.code_addr = code_addr;
  fixed.nr_entry = entries.size();
  Put(start, &fixed, sizeof fixed);
  return out;
}

size_t CodeMoveSize() { return sizeof(CodeMoveRecord); }

uint8_t* EncodeCodeMove(const CodeMove& move, uint8_t* out) {
  CodeMoveRecord record{};
  record.header = MakeRecordHeader(RecordType::kCodeMove, sizeof record, move.timestamp);
  record.pid = move.pid;
  record.tid = move.tid;
  record.vma = move.vma;
  record.old_code_addr = move.old_code_addr;
  record.new_code_addr = move.new_code_addr;
  record.code_size = move.code_size;
  record.code_index = move.code_index;
  return Put(out, &record, sizeof record);
}

size_t UnwindingInfoSize(const UnwindingInfo& info) {
  return Checked(uint64_t{sizeof(UnwindingInfoFixed)} + info.unwind_data.size());
}

uint8_t* EncodeUnwindingInfo(const UnwindingInfo& info, uint8_t* out) {
  UnwindingInfoFixed fixed{};
  fixed.header = MakeRecordHeader(RecordType::kCodeUnwindingInfo, UnwindingInfoSize(info), info.timestamp);
  fixed.unwind_data_size = info.unwind_data.size();
  fixed.eh_frame_hdr_size = info.eh_frame_hdr_size;
  fixed.mapped_size = info.mapped_size;
  out = Put(out, &fixed, sizeof fixed);
  return Put(out, info.unwind_data.data(), info.unwind_data.size());
}

size_t CloseSize() { return sizeof(CloseRecord); }

uint8_t* EncodeClose(uint64_t timestamp, uint8_t* out) {
  const CloseRecord record{MakeRecordHeader(RecordType::kCodeClose, sizeof(CloseRecord), timestamp)};
  return Put(out, &record, sizeof record);
}

size_t PaddedStringListSize(std::span<const std::string_view> strings) {
  size_t size = 0;
  for (std::string_view s : strings) size += CStringLength(s) + 1;
  return (size + 3) & ~size_t{3};
}

namespace {

uint8_t* PutPaddedStringList(uint8_t* out, std::span<const std::string_view> strings) {
  uint8_t* const start = out;
  for (std::string_view s : strings) out = PutCString(out, s);
  return PutZeros(out, PaddedStringListSize(strings) - static_cast<size_t>(out - start));
}

template <typename T>
uint8_t* PutArray(uint8_t* out, std::span<const T> items) {
  return Put(out, items.data(), items.size_bytes());
}

}  // namespace

size_t InlineDebugInfoSize(const InlineDebugInfo& info) {
  return Checked(uint64_t{sizeof(SamplyDebugInfo2Fixed)} + PaddedStringListSize(info.files) +
                 PaddedStringListSize(info.function_names) + info.functions.size_bytes() +
                 info.calls.size_bytes() + info.ranges.size_bytes() + info.lines.size_bytes());
}

uint8_t* EncodeInlineDebugInfo(const InlineDebugInfo& info, uint8_t* out) {
  SamplyDebugInfo2Fixed fixed{};
  fixed.header = MakeRecordHeader(RecordType::kSamplyDebugInfo2, InlineDebugInfoSize(info), info.timestamp);
  fixed.file_count = static_cast<uint32_t>(info.files.size());
  fixed.file_list_size = static_cast<uint32_t>(PaddedStringListSize(info.files));
  fixed.function_names_count = static_cast<uint32_t>(info.function_names.size());
  fixed.function_names_list_size = static_cast<uint32_t>(PaddedStringListSize(info.function_names));
  fixed.function_count = static_cast<uint32_t>(info.functions.size());
  fixed.inline_call_record_count = static_cast<uint32_t>(info.calls.size());
  fixed.range_count = static_cast<uint32_t>(info.ranges.size());
  fixed.line_record_count = static_cast<uint32_t>(info.lines.size());
  out = Put(out, &fixed, sizeof fixed);
  out = PutPaddedStringList(out, info.files);
  out = PutPaddedStringList(out, info.function_names);
  out = PutArray(out, info.functions);
  out = PutArray(out, info.calls);
  out = PutArray(out, info.ranges);
  return PutArray(out, info.lines);
}

}  // namespace jitdump
