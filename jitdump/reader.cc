#include "jitdump/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

namespace jitdump {
namespace {

// Byte-order aware field access into the file. Callers bound every offset first.
class Bytes {
 public:
  Bytes(std::span<const uint8_t> data, bool swap) : data_(data), swap_(swap) {}
  uint32_t U32(uint64_t offset) const {
    uint32_t v;
    std::memcpy(&v, data_.data() + offset, sizeof v);
    return swap_ ? __builtin_bswap32(v) : v;
  }
  uint64_t U64(uint64_t offset) const {
    uint64_t v;
    std::memcpy(&v, data_.data() + offset, sizeof v);
    return swap_ ? __builtin_bswap64(v) : v;
  }
  int32_t I32(uint64_t offset) const { return static_cast<int32_t>(U32(offset)); }
  const uint8_t* At(uint64_t offset) const { return data_.data() + offset; }
  uint64_t size() const { return data_.size(); }

 private:
  std::span<const uint8_t> data_;
  bool swap_;
};

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

void Add(std::vector<Problem>& problems, uint64_t offset, Severity severity, std::string message) {
  problems.push_back(Problem{offset, severity, std::move(message)});
}

// Finds the NUL terminating a string that starts at `begin` and must end before `end`.
// Returns the string length or -1.
int64_t CStringAt(const Bytes& bytes, uint64_t begin, uint64_t end) {
  if (begin >= end) return -1;
  const void* nul = std::memchr(bytes.At(begin), 0, end - begin);
  if (nul == nullptr) return -1;
  return static_cast<const uint8_t*>(nul) - bytes.At(begin);
}

// Printable UTF-8 without control characters: what a real source file name looks like.
bool PlausibleName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    const size_t length = Utf8SequenceLength(s, i);
    if (c < 0x20 || c == 0x7f || length == 0) return false;
    i += length;
  }
  return true;
}

constexpr uint64_t kHeaderSize = sizeof(FileHeader);
constexpr uint64_t kRecordHeaderSize = sizeof(RecordHeader);

void DecodeLoad(const Bytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(CodeLoadFixed);
  if (total < kFixed + 1) {
    Add(dump.problems, off + 4, Severity::kError,
        Format("CODE_LOAD total_size %" PRIu64 " is smaller than its %" PRIu64 "-byte fixed part plus a name",
               total, kFixed + 1));
    record.valid = false;
    return;
  }
  LoadBody load;
  load.pid = b.U32(off + 16);
  load.tid = b.U32(off + 20);
  load.vma = b.U64(off + 24);
  load.code_addr = b.U64(off + 32);
  load.code_size = b.U64(off + 40);
  load.code_index = b.U64(off + 48);
  const uint64_t room = total - kFixed - 1;  // bytes for code after at least the name's NUL
  if (load.code_size > room) {
    Add(dump.problems, off + 40, Severity::kError,
        Format("CODE_LOAD code_size %" PRIu64 " does not fit in the record (%" PRIu64
               " bytes after the fixed part and the name's NUL)",
               load.code_size, room));
    record.valid = false;
    return;
  }
  const uint64_t code_offset = off + total - load.code_size;
  const int64_t name_length = CStringAt(b, off + kFixed, code_offset);
  if (name_length < 0) {
    Add(dump.problems, off + kFixed, Severity::kError,
        "CODE_LOAD name has no NUL before the code bytes (the last code_size bytes of the record)");
    record.valid = false;
    return;
  }
  load.name.assign(reinterpret_cast<const char*>(b.At(off + kFixed)), static_cast<size_t>(name_length));
  load.code_offset = code_offset;
  record.body = std::move(load);
}

void DecodeMove(const Bytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  if (total < sizeof(CodeMoveRecord)) {
    Add(dump.problems, off + 4, Severity::kError,
        Format("CODE_MOVE total_size %" PRIu64 " is smaller than its %zu-byte layout", total, sizeof(CodeMoveRecord)));
    record.valid = false;
    return;
  }
  MoveBody move;
  move.pid = b.U32(off + 16);
  move.tid = b.U32(off + 20);
  move.vma = b.U64(off + 24);
  move.old_code_addr = b.U64(off + 32);
  move.new_code_addr = b.U64(off + 40);
  move.code_size = b.U64(off + 48);
  move.code_index = b.U64(off + 56);
  record.body = move;
}

void DecodeDebugInfo(const Bytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(DebugInfoFixed);
  constexpr uint64_t kEntryMin = sizeof(DebugEntryFixed) + 1;
  if (total < kFixed) {
    Add(dump.problems, off + 4, Severity::kError,
        Format("DEBUG_INFO total_size %" PRIu64 " is smaller than its %" PRIu64 "-byte fixed part", total, kFixed));
    record.valid = false;
    return;
  }
  DebugInfoBody info;
  info.code_addr = b.U64(off + 16);
  info.nr_entry = b.U64(off + 24);
  const uint64_t end = off + total;
  const uint64_t capacity = (total - kFixed) / kEntryMin;
  if (info.nr_entry > capacity) {
    Add(dump.problems, off + 24, Severity::kError,
        Format("DEBUG_INFO nr_entry %" PRIu64 " is larger than the record can hold (at most %" PRIu64
               " entries of 17+ bytes in %" PRIu64 " bytes)",
               info.nr_entry, capacity, total - kFixed));
    record.valid = false;
    record.body = std::move(info);
    return;
  }
  info.entries.reserve(static_cast<size_t>(info.nr_entry));
  uint64_t p = off + kFixed;
  for (uint64_t i = 0; i < info.nr_entry; ++i) {
    if (end - p < kEntryMin) {
      Add(dump.problems, p, Severity::kError,
          Format("DEBUG_INFO entry %" PRIu64 " of %" PRIu64 " runs past the record end (offset %" PRIu64 ")", i,
                 info.nr_entry, end));
      info.complete = false;
      record.valid = false;
      break;
    }
    DebugLine line;
    line.addr = b.U64(p);
    line.line = b.I32(p + 8);
    line.discrim = b.I32(p + 12);
    const int64_t length = CStringAt(b, p + 16, end);
    if (length < 0) {
      Add(dump.problems, p + 16, Severity::kError,
          Format("DEBUG_INFO entry %" PRIu64 " file name has no NUL before the record end", i));
      info.complete = false;
      record.valid = false;
      break;
    }
    line.file.assign(reinterpret_cast<const char*>(b.At(p + 16)), static_cast<size_t>(length));
    if (!PlausibleName(line.file)) {
      // node/V8 writes file names from freed memory: garbage with an embedded NUL, after
      // which walking by nr_entry is out of step. total_size is still right, so skip the rest.
      Add(dump.problems, p + 16, Severity::kWarning,
          Format("DEBUG_INFO entry %" PRIu64 " of %" PRIu64
                 " has a corrupted file name (not printable UTF-8); the remaining entries cannot be "
                 "located by nr_entry and are ignored (known node/V8 defect; perf would mis-read them)",
                 i, info.nr_entry));
      info.complete = false;
      break;
    }
    info.entries.push_back(std::move(line));
    p += 16 + static_cast<uint64_t>(length) + 1;
  }
  if (info.complete && end - p > 7) {
    Add(dump.problems, p, Severity::kWarning,
        Format("DEBUG_INFO has %" PRIu64 " unused bytes after its %" PRIu64 " entries", end - p, info.nr_entry));
  }
  record.body = std::move(info);
}

void DecodeUnwinding(const Bytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(UnwindingInfoFixed);
  if (total < kFixed) {
    Add(dump.problems, off + 4, Severity::kError,
        Format("UNWINDING_INFO total_size %" PRIu64 " is smaller than its %" PRIu64 "-byte fixed part", total,
               kFixed));
    record.valid = false;
    return;
  }
  UnwindingBody unwind;
  unwind.unwind_data_size = b.U64(off + 16);
  unwind.eh_frame_hdr_size = b.U64(off + 24);
  unwind.mapped_size = b.U64(off + 32);
  if (unwind.unwind_data_size > total - kFixed) {
    Add(dump.problems, off + 16, Severity::kError,
        Format("UNWINDING_INFO unwind_data_size %" PRIu64 " exceeds the %" PRIu64 " bytes in the record",
               unwind.unwind_data_size, total - kFixed));
    record.valid = false;
  } else if (unwind.eh_frame_hdr_size > unwind.unwind_data_size) {
    Add(dump.problems, off + 24, Severity::kError,
        Format("UNWINDING_INFO eh_frame_hdr_size %" PRIu64 " exceeds unwind_data_size %" PRIu64,
               unwind.eh_frame_hdr_size, unwind.unwind_data_size));
    record.valid = false;
  }
  record.body = unwind;
}

// One of the samply record's padded string lists. Returns false on error.
bool DecodeStringList(const Bytes& b, uint64_t begin, uint32_t size, uint32_t count, const char* what,
                      std::vector<std::string>& out, JitDump& dump) {
  if (count > size) {
    Add(dump.problems, begin, Severity::kError,
        Format("samply %s: %u strings cannot fit in %u bytes", what, count, size));
    return false;
  }
  out.reserve(count);
  uint64_t p = begin;
  const uint64_t end = begin + size;
  for (uint32_t i = 0; i < count; ++i) {
    const int64_t length = CStringAt(b, p, end);
    if (length < 0) {
      Add(dump.problems, p, Severity::kError,
          Format("samply %s: string %u has no NUL inside the list's %u bytes", what, i, size));
      return false;
    }
    out.emplace_back(reinterpret_cast<const char*>(b.At(p)), static_cast<size_t>(length));
    p += static_cast<uint64_t>(length) + 1;
  }
  const uint64_t used = p - begin;
  const uint64_t padded = (used + 3) & ~uint64_t{3};
  if (padded != size) {
    Add(dump.problems, begin, Severity::kError,
        Format("samply %s: list size %u does not match its strings (%" PRIu64 " bytes, padded to %" PRIu64 ")",
               what, size, used, padded));
    return false;
  }
  for (uint64_t q = p; q < end; ++q) {
    if (*b.At(q) != 0) {
      Add(dump.problems, q, Severity::kWarning, Format("samply %s: padding byte is not zero", what));
      break;
    }
  }
  return true;
}

void DecodeInline(const Bytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(SamplyDebugInfo2Fixed);
  record.valid = false;
  if (total < kFixed) {
    Add(dump.problems, off + 4, Severity::kError,
        Format("samply DEBUG_INFO2 total_size %" PRIu64 " is smaller than its %" PRIu64 "-byte fixed part", total,
               kFixed));
    return;
  }
  const uint32_t file_count = b.U32(off + 16);
  const uint32_t file_list_size = b.U32(off + 20);
  const uint32_t names_count = b.U32(off + 24);
  const uint32_t names_list_size = b.U32(off + 28);
  const uint32_t function_count = b.U32(off + 32);
  const uint32_t call_count = b.U32(off + 36);
  const uint32_t range_count = b.U32(off + 40);
  const uint32_t line_count = b.U32(off + 44);
  const uint64_t need = uint64_t{file_list_size} + names_list_size + uint64_t{function_count} * 20 +
                        uint64_t{call_count} * 20 + uint64_t{range_count} * 8 + uint64_t{line_count} * 16;
  const uint64_t avail = total - kFixed;
  if (need > avail) {
    Add(dump.problems, off + 16, Severity::kError,
        Format("samply DEBUG_INFO2 lists need %" PRIu64 " bytes but the record has %" PRIu64, need, avail));
    return;
  }
  if (file_list_size % 4 != 0) {
    Add(dump.problems, off + 20, Severity::kError,
        Format("samply DEBUG_INFO2 file_list_size %u is not a multiple of 4", file_list_size));
    return;
  }
  if (names_list_size % 4 != 0) {
    Add(dump.problems, off + 28, Severity::kError,
        Format("samply DEBUG_INFO2 function_names_list_size %u is not a multiple of 4", names_list_size));
    return;
  }
  if (need < avail) {
    Add(dump.problems, off + kFixed + need, Severity::kWarning,
        Format("samply DEBUG_INFO2 has %" PRIu64 " unused bytes after its lists", avail - need));
  }
  InlineBody info;
  uint64_t p = off + kFixed;
  if (!DecodeStringList(b, p, file_list_size, file_count, "file list", info.files, dump)) return;
  p += file_list_size;
  if (!DecodeStringList(b, p, names_list_size, names_count, "function name list", info.function_names, dump)) {
    return;
  }
  p += names_list_size;
  bool ok = true;
  auto error = [&](uint64_t at, std::string message) {
    Add(dump.problems, at, Severity::kError, "samply DEBUG_INFO2 " + message);
    ok = false;
  };

  const uint64_t functions_at = p;
  info.functions.resize(function_count);
  for (uint32_t i = 0; i < function_count; ++i, p += 20) {
    SamplyFunctionRecord& f = info.functions[i];
    f = {b.U32(p), b.U32(p + 4), b.U32(p + 8), b.U32(p + 12), b.U32(p + 16)};
    if (f.function_name_index >= names_count) {
      error(p, Format("function %u: function_name_index %u out of range (%u names)", i, f.function_name_index,
                      names_count));
    }
    if (f.file_index >= file_count) {
      error(p + 4, Format("function %u: file_index %u out of range (%u files)", i, f.file_index, file_count));
    }
  }
  if (function_count == 0) error(functions_at, "has no function records (the first describes the outer function)");

  info.calls.resize(call_count);
  info.range_begin.resize(call_count);
  uint64_t ranges_used = 0;
  uint32_t previous_depth = 0;
  for (uint32_t i = 0; i < call_count; ++i, p += 20) {
    SamplyInlineCallRecord& c = info.calls[i];
    c = {b.U32(p), b.U32(p + 4), b.U32(p + 8), b.U32(p + 12), b.U32(p + 16)};
    if (i == 0 && c.depth != 0) error(p, Format("inline call 0 has depth %u (must be 0)", c.depth));
    if (i > 0 && c.depth > previous_depth + 1) {
      error(p, Format("inline call %u: depth %u deeper than previous depth %u + 1", i, c.depth, previous_depth));
    }
    previous_depth = c.depth;
    info.max_depth = std::max(info.max_depth, c.depth + 1);
    if (c.range_count == 0) error(p + 4, Format("inline call %u has range_count 0 (must be >= 1)", i));
    if (c.function_index >= function_count) {
      error(p + 8, Format("inline call %u: function_index %u out of range (%u functions)", i, c.function_index,
                          function_count));
    }
    info.range_begin[i] = static_cast<uint32_t>(std::min<uint64_t>(ranges_used, UINT32_MAX));
    ranges_used += c.range_count;
  }
  if (ranges_used != range_count) {
    error(off + 40, Format("inline calls use %" PRIu64 " ranges but range_count is %u", ranges_used, range_count));
  }

  info.ranges.resize(range_count);
  const uint64_t ranges_at = p;
  for (uint32_t i = 0; i < range_count; ++i, p += 8) info.ranges[i] = {b.U32(p), b.U32(p + 4)};
  // An inlined call's code lies inside its caller's: warn when a range leaves every range of the
  // enclosing call (only when the lists are consistent enough to tell).
  if (ok && ranges_used == range_count) {
    std::vector<uint32_t> parents;  // call index per depth
    for (uint32_t i = 0; i < call_count; ++i) {
      const SamplyInlineCallRecord& c = info.calls[i];
      parents.resize(c.depth);
      if (c.depth > 0) {
        const SamplyInlineCallRecord& parent = info.calls[parents[c.depth - 1]];
        const uint32_t pb = info.range_begin[parents[c.depth - 1]];
        for (uint32_t k = info.range_begin[i]; k < info.range_begin[i] + c.range_count; ++k) {
          const SamplyRangeRecord& r = info.ranges[k];
          bool inside = false;
          for (uint32_t q = pb; q < pb + parent.range_count && !inside; ++q) {
            const SamplyRangeRecord& pr = info.ranges[q];
            inside = r.start_offset >= pr.start_offset &&
                     uint64_t{r.start_offset} + r.size <= uint64_t{pr.start_offset} + pr.size;
          }
          if (!inside) {
            Add(dump.problems, ranges_at + uint64_t{k} * 8, Severity::kWarning,
                Format("samply DEBUG_INFO2 inline call %u: range [0x%x, +0x%x) is not inside a range of its caller "
                       "(call %u)",
                       i, r.start_offset, r.size, parents[c.depth - 1]));
          }
        }
      }
      parents.push_back(i);
    }
  }

  info.lines.resize(line_count);
  for (uint32_t i = 0; i < line_count; ++i, p += 16) {
    SamplyLineRecord& l = info.lines[i];
    l = {b.U32(p), b.U32(p + 4), b.U32(p + 8), b.U32(p + 12)};
    if (l.file_index >= file_count) {
      error(p + 4, Format("line record %u: file_index %u out of range (%u files)", i, l.file_index, file_count));
    }
    if (i > 0 && l.code_offset < info.lines[i - 1].code_offset) {
      error(p, Format("line record %u: code_offset 0x%x is below the previous 0x%x (must be sorted)", i,
                      l.code_offset, info.lines[i - 1].code_offset));
    }
  }
  record.valid = ok;
  record.body = std::move(info);
}

}  // namespace

const char* SeverityName(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

std::string FormatProblem(const Problem& problem) {
  return Format("offset %" PRIu64 " (0x%" PRIx64 "): %s: ", problem.offset, problem.offset,
                SeverityName(problem.severity)) +
         problem.message;
}

const char* RecordTypeName(uint32_t id) {
  switch (static_cast<RecordType>(id)) {
    case RecordType::kCodeLoad: return "CODE_LOAD";
    case RecordType::kCodeMove: return "CODE_MOVE";
    case RecordType::kCodeDebugInfo: return "DEBUG_INFO";
    case RecordType::kCodeClose: return "CODE_CLOSE";
    case RecordType::kCodeUnwindingInfo: return "UNWINDING_INFO";
    case RecordType::kSamplyDebugInfo2: return "SAMPLY_DEBUG_INFO2";
  }
  return "UNKNOWN";
}

bool JitDump::HasErrors() const {
  return std::any_of(problems.begin(), problems.end(),
                     [](const Problem& p) { return p.severity == Severity::kError; });
}

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  const auto c = static_cast<uint8_t>(s[i]);
  size_t extra = 0;
  if (c < 0x80) {
    return 1;
  } else if ((c & 0xe0) == 0xc0 && c >= 0xc2) {
    extra = 1;
  } else if ((c & 0xf0) == 0xe0) {
    extra = 2;
  } else if ((c & 0xf8) == 0xf0 && c <= 0xf4) {
    extra = 3;
  } else {
    return 0;
  }
  if (i + extra >= s.size()) return 0;
  for (size_t k = 1; k <= extra; ++k) {
    if ((static_cast<uint8_t>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  return extra + 1;
}

JitDump Parse(std::span<const uint8_t> data) {
  JitDump dump;
  dump.file_size = data.size();
  if (data.size() < 4) {
    Add(dump.problems, 0, Severity::kError,
        Format("file is %zu bytes, too short for the jitdump magic", data.size()));
    return dump;
  }
  uint32_t magic;
  std::memcpy(&magic, data.data(), sizeof magic);
  if (magic == kMagic) {
    dump.cross_endian = false;
  } else if (magic == kMagicSwapped) {
    dump.cross_endian = true;
  } else {
    Add(dump.problems, 0, Severity::kError,
        Format("bad magic 0x%08x (expected 0x%08x \"JiTD\" in either byte order)", magic, kMagic));
    return dump;
  }
  if (data.size() < kHeaderSize) {
    Add(dump.problems, 0, Severity::kError,
        Format("file is %zu bytes, too short for the %" PRIu64 "-byte header", data.size(), kHeaderSize));
    return dump;
  }
  const Bytes b(data, dump.cross_endian);
  FileHeader& h = dump.header;
  h.magic = kMagic;
  h.version = b.U32(4);
  h.total_size = b.U32(8);
  h.elf_mach = b.U32(12);
  h.pad1 = b.U32(16);
  h.pid = b.U32(20);
  h.timestamp = b.U64(24);
  h.flags = b.U64(32);
  if (h.total_size < kHeaderSize) {
    Add(dump.problems, 8, Severity::kError,
        Format("header total_size %u is smaller than the %" PRIu64 "-byte header", h.total_size, kHeaderSize));
    return dump;
  }
  if (h.total_size > data.size()) {
    Add(dump.problems, 8, Severity::kError,
        Format("header total_size %u runs past the end of the %zu-byte file", h.total_size, data.size()));
    return dump;
  }
  dump.header_ok = true;
  dump.records_offset = h.total_size;

  int64_t pending_debug = -1, pending_inline = -1, pending_unwind = -1;
  uint64_t off = dump.records_offset;
  const uint64_t size = data.size();
  while (off < size) {
    const uint64_t left = size - off;
    if (left < kRecordHeaderSize) {
      dump.truncated_offset = off;
      dump.truncated_bytes = left;
      Add(dump.problems, off, Severity::kWarning,
          Format("truncated final record: %" PRIu64 " bytes, not even a 16-byte record header", left));
      break;
    }
    Record record;
    record.offset = off;
    record.id = b.U32(off);
    record.total_size = b.U32(off + 4);
    record.timestamp = b.U64(off + 8);
    if (record.total_size < kRecordHeaderSize) {
      Add(dump.problems, off + 4, Severity::kError,
          Format("%s record total_size %u is smaller than 16; cannot continue", RecordTypeName(record.id),
                 record.total_size));
      break;
    }
    if (record.total_size > left) {
      dump.truncated_offset = off;
      dump.truncated_bytes = left;
      dump.truncated_needed = record.total_size;
      Add(dump.problems, off, Severity::kWarning,
          Format("truncated final %s record: total_size %u but only %" PRIu64 " bytes left in the file",
                 RecordTypeName(record.id), record.total_size, left));
      break;
    }
    const uint64_t total = record.total_size;
    const int64_t index = static_cast<int64_t>(dump.records.size());
    switch (static_cast<RecordType>(record.id)) {
      case RecordType::kCodeLoad:
        DecodeLoad(b, off, total, record, dump);
        if (LoadBody* load = std::get_if<LoadBody>(&record.body)) {
          load->debug_info = pending_debug;
          load->inline_info = pending_inline;
          load->unwinding_info = pending_unwind;
        }
        pending_debug = pending_inline = pending_unwind = -1;
        break;
      case RecordType::kCodeMove: DecodeMove(b, off, total, record, dump); break;
      case RecordType::kCodeDebugInfo:
        DecodeDebugInfo(b, off, total, record, dump);
        pending_debug = index;
        break;
      case RecordType::kCodeClose: break;
      case RecordType::kCodeUnwindingInfo:
        DecodeUnwinding(b, off, total, record, dump);
        pending_unwind = index;
        break;
      case RecordType::kSamplyDebugInfo2:
        DecodeInline(b, off, total, record, dump);
        pending_inline = index;
        break;
      default: ++dump.unknown_records; break;
    }
    dump.records.push_back(std::move(record));
    off += total;
  }
  return dump;
}

Status ReadWholeFile(const std::string& path, std::vector<uint8_t>* out) {
  out->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Error("open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Error("fstat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error("open (not a regular file)", EINVAL);
  }
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t got = ::read(fd, out->data() + done, out->size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      return Status::Error("read", err);
    }
    if (got == 0) break;  // shrank while reading
    done += static_cast<size_t>(got);
  }
  out->resize(done);
  ::close(fd);
  return Status::Ok();
}

std::vector<Problem> Check(const JitDump& dump) {
  std::vector<Problem> problems = dump.problems;
  if (!dump.header_ok) return problems;
  const FileHeader& h = dump.header;
  if (h.total_size != kHeaderSize) {
    Add(problems, 8, Severity::kError,
        Format("header total_size is %u; perf 6.1 only reads headers of exactly 40 bytes (it mis-skips the rest)",
               h.total_size));
  }
  if (h.version > 1) Add(problems, 4, Severity::kError, Format("version %u: perf 6.1 rejects version > 1", h.version));
  if (h.flags & ~kFlagArchTimestamp) {
    Add(problems, 32, Severity::kError,
        Format("flags 0x%" PRIx64 ": perf 6.1 rejects any flag but bit 0 (ARCH_TIMESTAMP)", h.flags));
  } else if (h.flags & kFlagArchTimestamp) {
    Add(problems, 32, Severity::kWarning,
        "ARCH_TIMESTAMP flag set: perf needs TIME_CONV in perf.data to use this dump");
  }
  if (h.pad1 != 0) {
    Add(problems, 16, Severity::kWarning,
        Format("pad1 is 0x%08x, not 0 (node/V8 writes 0xdeadbeef; perf ignores it)", h.pad1));
  }

  // Timestamps: the header's must come from the records' clock. Records are NOT required to
  // be in timestamp order (producers may move load timestamps earlier), so only the header is
  // compared with the records' range.
  uint64_t min_ts = UINT64_MAX, max_ts = 0;
  for (const Record& r : dump.records) {
    if (r.timestamp == 0) continue;
    min_ts = std::min(min_ts, r.timestamp);
    max_ts = std::max(max_ts, r.timestamp);
  }
  constexpr uint64_t kSlackNs = 60ull * 1000 * 1000 * 1000;
  if (h.timestamp != 0 && max_ts != 0 && h.timestamp > max_ts + kSlackNs) {
    Add(problems, 24, Severity::kWarning,
        Format("header timestamp %" PRIu64 " is later than every record (records span %" PRIu64 "..%" PRIu64
               "): it is from another clock (node writes wall-clock microseconds there)",
               h.timestamp, min_ts, max_ts));
  }

  const Record* pending_debug = nullptr;
  const Record* pending_inline = nullptr;
  std::unordered_map<uint64_t, uint64_t> index_offset;  // code_index -> offset of its load
  size_t debug_records = 0, shifted_0x40 = 0, starts_at_0x40 = 0;
  uint64_t first_shift_offset = 0;
  for (const Record& r : dump.records) {
    if (const DebugInfoBody* d = r.debug_info()) {
      if (pending_debug != nullptr) {
        Add(problems, r.offset, Severity::kWarning,
            Format("DEBUG_INFO replaces the one at offset %" PRIu64 " before any CODE_LOAD (perf keeps only the last)",
                   pending_debug->offset));
      }
      pending_debug = &r;
      (void)d;
    } else if (r.inline_info() != nullptr) {
      if (pending_inline != nullptr) {
        Add(problems, r.offset, Severity::kWarning,
            Format("samply DEBUG_INFO2 replaces the one at offset %" PRIu64 " before any CODE_LOAD",
                   pending_inline->offset));
      }
      pending_inline = &r;
    } else if (const LoadBody* load = r.load()) {
      if (load->code_size > UINT64_MAX - load->code_addr) {
        Add(problems, r.offset + 32, Severity::kError,
            Format("CODE_LOAD code 0x%" PRIx64 "+%" PRIu64 " runs past the end of the address space",
                   load->code_addr, load->code_size));
      }
      auto [it, inserted] = index_offset.emplace(load->code_index, r.offset);
      if (!inserted) {
        Add(problems, r.offset + 48, Severity::kError,
            Format("code_index %" PRIu64 " repeats the CODE_LOAD at offset %" PRIu64
                   " (perf overwrites jitted-<pid>-<index>.so)",
                   load->code_index, it->second));
      }
      if (pending_debug != nullptr) {
        const DebugInfoBody& d = *pending_debug->debug_info();
        if (!d.entries.empty()) ++debug_records;
        if (d.code_addr != load->code_addr) {
          Add(problems, pending_debug->offset + 16, Severity::kError,
              Format("DEBUG_INFO code_addr 0x%" PRIx64 " differs from the next CODE_LOAD's 0x%" PRIx64
                     " (offset %" PRIu64 "); perf applies it to that load regardless",
                     d.code_addr, load->code_addr, r.offset));
        }
        uint64_t previous = 0;
        uint64_t min_delta = UINT64_MAX;
        uint64_t entry_offset = pending_debug->offset + sizeof(DebugInfoFixed);
        bool reported_beyond = false;
        for (size_t i = 0; i < d.entries.size(); ++i) {
          const DebugLine& e = d.entries[i];
          if (e.addr < load->code_addr) {
            Add(problems, entry_offset, Severity::kError,
                Format("DEBUG_INFO entry %zu addr 0x%" PRIx64 " is below the load's code_addr 0x%" PRIx64
                       " (perf computes unsigned deltas)",
                       i, e.addr, load->code_addr));
          } else {
            min_delta = std::min(min_delta, e.addr - load->code_addr);
            if (e.addr - load->code_addr >= load->code_size && !reported_beyond) {
              reported_beyond = true;
              Add(problems, entry_offset, Severity::kWarning,
                  Format("DEBUG_INFO entry %zu addr 0x%" PRIx64 " is past the end of the code (0x%" PRIx64 "+0x%" PRIx64
                         ")",
                         i, e.addr, load->code_addr, load->code_size));
            }
          }
          if (i > 0 && e.addr < previous) {
            Add(problems, entry_offset, Severity::kError,
                Format("DEBUG_INFO entry %zu addr 0x%" PRIx64 " is below the previous 0x%" PRIx64
                       " (entries must ascend)",
                       i, e.addr, previous));
          }
          previous = e.addr;
          entry_offset += sizeof(DebugEntryFixed) + e.file.size() + 1;
        }
        if (min_delta != UINT64_MAX) {
          if (min_delta >= 0x40) {
            if (shifted_0x40 == 0) first_shift_offset = pending_debug->offset;
            ++shifted_0x40;
          }
          if (min_delta == 0x40) ++starts_at_0x40;
        }
        pending_debug = nullptr;
      }
      if (pending_inline != nullptr) {
        const InlineBody& info = *pending_inline->inline_info();
        for (size_t i = 0; i < info.ranges.size(); ++i) {
          const SamplyRangeRecord& range = info.ranges[i];
          if (uint64_t{range.start_offset} + range.size > load->code_size) {
            Add(problems, pending_inline->offset, Severity::kError,
                Format("samply DEBUG_INFO2 range %zu [0x%x, +0x%x) is outside the next CODE_LOAD's %" PRIu64
                       " code bytes (offset %" PRIu64 ")",
                       i, range.start_offset, range.size, load->code_size, r.offset));
            break;
          }
        }
        for (size_t i = 0; i < info.lines.size(); ++i) {
          if (info.lines[i].code_offset >= load->code_size && load->code_size != 0) {
            Add(problems, pending_inline->offset, Severity::kError,
                Format("samply DEBUG_INFO2 line record %zu code_offset 0x%x is outside the next CODE_LOAD's %" PRIu64
                       " code bytes",
                       i, info.lines[i].code_offset, load->code_size));
            break;
          }
        }
        pending_inline = nullptr;
      }
    } else if (const MoveBody* move = r.move()) {
      if (index_offset.find(move->code_index) == index_offset.end()) {
        Add(problems, r.offset + 56, Severity::kWarning,
            Format("CODE_MOVE code_index %" PRIu64 " names no earlier CODE_LOAD", move->code_index));
      }
    }
  }
  if (pending_debug != nullptr) {
    Add(problems, pending_debug->offset, Severity::kWarning, "DEBUG_INFO is not followed by a CODE_LOAD");
  }
  if (pending_inline != nullptr) {
    Add(problems, pending_inline->offset, Severity::kWarning, "samply DEBUG_INFO2 is not followed by a CODE_LOAD");
  }
  if (debug_records >= 2 && shifted_0x40 == debug_records && starts_at_0x40 > 0) {
    Add(problems, first_shift_offset, Severity::kWarning,
        Format("all %zu DEBUG_INFO records start at code_addr+0x40 or later: addresses look shifted by 0x40 "
               "(V8 writes PC+0x40)",
               debug_records));
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.offset < b.offset; });
  return problems;
}

// ---- queries ----

int64_t FindLoad(const JitDump& dump, uint64_t addr) {
  for (size_t i = dump.records.size(); i-- > 0;) {
    const LoadBody* load = dump.records[i].load();
    if (load != nullptr && addr >= load->code_addr && addr - load->code_addr < load->code_size) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

int64_t FindLoadAt(const JitDump& dump, uint64_t addr, uint64_t timestamp) {
  for (size_t i = dump.records.size(); i-- > 0;) {
    const LoadBody* load = dump.records[i].load();
    if (load != nullptr && dump.records[i].timestamp <= timestamp && addr >= load->code_addr &&
        addr - load->code_addr < load->code_size) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

bool FindLine(const JitDump& dump, size_t load_index, uint64_t addr, std::string* file, uint32_t* line) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr || addr < load->code_addr) return false;
  if (load->inline_info >= 0) {
    const InlineBody* info = dump.records[static_cast<size_t>(load->inline_info)].inline_info();
    if (info != nullptr && !info->lines.empty() && dump.records[static_cast<size_t>(load->inline_info)].valid) {
      const uint64_t offset = addr - load->code_addr;
      auto it = std::upper_bound(info->lines.begin(), info->lines.end(), offset,
                                 [](uint64_t o, const SamplyLineRecord& l) { return o < l.code_offset; });
      if (it == info->lines.begin()) return false;
      --it;
      *file = it->file_index < info->files.size() ? info->files[it->file_index] : "?";
      *line = it->line_number;
      return true;
    }
  }
  if (load->debug_info >= 0) {
    const DebugInfoBody* d = dump.records[static_cast<size_t>(load->debug_info)].debug_info();
    if (d == nullptr) return false;
    const DebugLine* best = nullptr;
    for (const DebugLine& e : d->entries) {
      if (e.addr <= addr && (best == nullptr || e.addr >= best->addr)) best = &e;
    }
    if (best == nullptr) return false;
    *file = best->file;
    *line = best->line > 0 ? static_cast<uint32_t>(best->line) : 0;
    return true;
  }
  return false;
}

std::vector<InlineFrame> InlineChain(const JitDump& dump, size_t load_index, uint64_t addr) {
  std::vector<InlineFrame> frames;
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr || load->inline_info < 0 || addr < load->code_addr) return frames;
  const Record& rec = dump.records[static_cast<size_t>(load->inline_info)];
  const InlineBody* info = rec.inline_info();
  if (info == nullptr || !rec.valid || info->functions.empty()) return frames;
  const uint64_t offset = addr - load->code_addr;

  // Walk the DFS list keeping, per depth, whether the ancestor at that depth contains offset.
  std::vector<uint32_t> chain;      // call indexes, outermost first
  std::vector<bool> ancestor_hit;   // ancestor_hit[d] = the current call at depth d contains offset
  for (size_t i = 0; i < info->calls.size(); ++i) {
    const SamplyInlineCallRecord& c = info->calls[i];
    const size_t depth = c.depth;
    if (depth > ancestor_hit.size()) break;  // malformed; validated elsewhere
    ancestor_hit.resize(depth);
    const bool parent_ok = depth == 0 || ancestor_hit[depth - 1];
    bool hit = false;
    const uint64_t begin = info->range_begin[i];
    for (uint64_t k = begin; k < begin + c.range_count && k < info->ranges.size(); ++k) {
      const SamplyRangeRecord& r = info->ranges[k];
      if (offset >= r.start_offset && offset - r.start_offset < r.size) hit = true;
    }
    hit = hit && parent_ok;
    ancestor_hit.push_back(hit);
    if (hit && depth == chain.size()) chain.push_back(static_cast<uint32_t>(i));
  }

  auto function_name = [&](uint32_t function_index) -> std::string {
    if (function_index >= info->functions.size()) return "?";
    const uint32_t n = info->functions[function_index].function_name_index;
    return n < info->function_names.size() ? info->function_names[n] : "?";
  };
  auto function_file = [&](uint32_t function_index) -> std::string {
    if (function_index >= info->functions.size()) return "?";
    const uint32_t f = info->functions[function_index].file_index;
    return f < info->files.size() ? info->files[f] : "?";
  };

  // Innermost: its line from the line records.
  InlineFrame innermost;
  const uint32_t innermost_function = chain.empty() ? 0 : info->calls[chain.back()].function_index;
  innermost.function = function_name(innermost_function);
  innermost.file = function_file(innermost_function);
  std::string file;
  uint32_t line = 0;
  if (FindLine(dump, load_index, addr, &file, &line)) {
    innermost.file = file;
    innermost.line = line;
  }
  frames.push_back(innermost);
  // Each caller's line is the call_line of the call record below it.
  for (size_t k = chain.size(); k-- > 0;) {
    const SamplyInlineCallRecord& call = info->calls[chain[k]];
    const uint32_t caller = k == 0 ? 0 : info->calls[chain[k - 1]].function_index;
    frames.push_back(InlineFrame{function_name(caller), function_file(caller), call.call_line_number});
  }
  return frames;
}

CodeMap::CodeMap(const JitDump& dump) {
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* load = dump.records[i].load();
    if (load == nullptr || load->code_size == 0) continue;
    const uint64_t start = load->code_addr;
    const uint64_t end = load->code_size > UINT64_MAX - start ? UINT64_MAX : start + load->code_size;
    auto it = spans_.lower_bound(start);
    if (it != spans_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > start) {
        if (prev->second.end > end) spans_[end] = Span{end, prev->second.end, prev->second.record};
        prev->second.end = start;
      }
    }
    it = spans_.lower_bound(start);
    while (it != spans_.end() && it->first < end) {
      if (it->second.end > end) spans_[end] = Span{end, it->second.end, it->second.record};
      it = spans_.erase(it);
    }
    spans_[start] = Span{start, end, i};
  }
}

int64_t CodeMap::Find(uint64_t addr) const {
  auto it = spans_.upper_bound(addr);
  if (it == spans_.begin()) return -1;
  --it;
  return addr < it->second.end ? static_cast<int64_t>(it->second.record) : -1;
}

SidecarIndex::SidecarIndex(const JitDump* sidecar) : sidecar_(sidecar) {
  if (sidecar == nullptr) return;
  for (size_t i = 0; i < sidecar->records.size(); ++i) {
    const LoadBody* load = sidecar->records[i].load();
    if (load != nullptr && load->inline_info >= 0) by_code_index_[load->code_index].push_back(i);
  }
}

int64_t SidecarIndex::Match(const JitDump& dump, size_t load_index) const {
  if (sidecar_ == nullptr) return -1;
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return -1;
  auto it = by_code_index_.find(load->code_index);
  if (it == by_code_index_.end()) return -1;
  for (size_t i : it->second) {
    const LoadBody* copy = sidecar_->records[i].load();
    if (copy->code_addr == load->code_addr && copy->code_size == load->code_size &&
        sidecar_->records[i].timestamp == dump.records[load_index].timestamp) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

std::vector<InlineFrame> InlineChain(const JitDump& dump, const SidecarIndex& sidecar, size_t load_index,
                                     uint64_t addr) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return {};
  if (load->inline_info >= 0) return InlineChain(dump, load_index, addr);
  const int64_t copy = sidecar.Match(dump, load_index);
  if (copy < 0) return {};
  return InlineChain(*sidecar.sidecar(), static_cast<size_t>(copy), addr);
}

std::string SourceRange(const JitDump& dump, size_t load_index) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return "";
  std::string file;
  uint32_t lo = UINT32_MAX, hi = 0;
  if (load->inline_info >= 0 && dump.records[static_cast<size_t>(load->inline_info)].valid) {
    const InlineBody* info = dump.records[static_cast<size_t>(load->inline_info)].inline_info();
    if (info != nullptr && !info->functions.empty()) {
      const uint32_t file_index = info->functions[0].file_index;
      if (file_index < info->files.size()) file = info->files[file_index];
      if (info->functions[0].start_line != 0) lo = hi = info->functions[0].start_line;
      // Only the outer function's own lines: skip code inside a depth-0 inline call.
      std::vector<SamplyRangeRecord> inlined;
      for (size_t c = 0; c < info->calls.size(); ++c) {
        if (info->calls[c].depth != 0) continue;
        for (uint64_t k = info->range_begin[c]; k < uint64_t{info->range_begin[c]} + info->calls[c].range_count &&
                                                k < info->ranges.size();
             ++k) {
          inlined.push_back(info->ranges[k]);
        }
      }
      for (const SamplyLineRecord& l : info->lines) {
        if (l.file_index != file_index || l.line_number == 0) continue;
        const bool in_inline = std::any_of(inlined.begin(), inlined.end(), [&](const SamplyRangeRecord& r) {
          return l.code_offset >= r.start_offset && l.code_offset - r.start_offset < r.size;
        });
        if (in_inline) continue;
        lo = std::min(lo, l.line_number);
        hi = std::max(hi, l.line_number);
      }
    }
  }
  if (file.empty() && load->debug_info >= 0) {
    const DebugInfoBody* d = dump.records[static_cast<size_t>(load->debug_info)].debug_info();
    if (d != nullptr && !d->entries.empty()) {
      file = d->entries.front().file;
      for (const DebugLine& e : d->entries) {
        if (e.file != file || e.line <= 0) continue;
        lo = std::min(lo, static_cast<uint32_t>(e.line));
        hi = std::max(hi, static_cast<uint32_t>(e.line));
      }
    }
  }
  if (file.empty()) return "";
  if (lo == UINT32_MAX) return file;
  if (lo == hi) return Format("%s:%u", file.c_str(), lo);
  return Format("%s:%u-%u", file.c_str(), lo, hi);
}

}  // namespace jitdump
