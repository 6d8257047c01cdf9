// The decoder (decoder.h): the header, the record loop, and every record type but samply's
// inline record (inline_record_decoder.cc).
#include "jitdump/read/decoder.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "jitdump/read/record_bytes.h"

namespace jitdump {
namespace {

constexpr uint64_t kTotalSizeAt = offsetof(RecordHeader, total_size);

// Length in bytes (1-4) of the UTF-8 sequence starting at s[i] (lead byte and continuation
// bytes well formed), 0 when the bytes there are not UTF-8.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
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

// Printable UTF-8 without control characters: what a real source file name looks like.
bool PlausibleName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x20 && c < 0x7f) {  // printable ASCII, what nearly every file name is made of
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(s, i);
    if (c < 0x20 || c == 0x7f || length == 0) return false;
    i += length;
  }
  return true;
}

void DecodeLoad(const RecordBytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(CodeLoadFixed);
  if (!HasRoomFor(off, total, kFixed + 1, "CODE_LOAD", "fixed part plus a name", record, dump)) return;
  const auto fixed = b.Read<CodeLoadFixed>(off);
  LoadBody load;
  load.pid = fixed.pid;
  load.tid = fixed.tid;
  load.vma = fixed.vma;
  load.code_addr = fixed.code_addr;
  load.code_size = fixed.code_size;
  load.code_index = fixed.code_index;
  const uint64_t room = total - kFixed - 1;  // bytes for code after at least the name's NUL
  if (load.code_size > room) {
    AddProblem(dump.problems, off + offsetof(CodeLoadFixed, code_size), Severity::kError,
               "CODE_LOAD code_size %" PRIu64 " does not fit in the record (%" PRIu64
               " bytes after the fixed part and the name's NUL)",
               load.code_size, room);
    record.valid = false;
    return;
  }
  const uint64_t code_offset = off + total - load.code_size;
  const std::optional<std::string_view> name = b.CString(off + kFixed, code_offset);
  if (!name) {
    AddProblem(dump.problems, off + kFixed, Severity::kError,
               "CODE_LOAD name has no NUL before the code bytes (the last code_size bytes of the record)");
    record.valid = false;
    return;
  }
  load.name = *name;
  load.code_offset = code_offset;
  record.body = std::move(load);
}

void DecodeMove(const RecordBytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  if (!HasRoomFor(off, total, sizeof(CodeMoveRecord), "CODE_MOVE", "layout", record, dump)) return;
  const auto fixed = b.Read<CodeMoveRecord>(off);
  record.body = MoveBody{fixed.pid,           fixed.tid,       fixed.vma,       fixed.old_code_addr,
                         fixed.new_code_addr, fixed.code_size, fixed.code_index};
}

void DecodeDebugInfo(const RecordBytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(DebugInfoFixed);
  constexpr uint64_t kEntryMin = sizeof(DebugEntryFixed) + 1;  // an entry with an empty file name
  if (!HasRoomFor(off, total, kFixed, "DEBUG_INFO", "fixed part", record, dump)) return;
  const auto fixed = b.Read<DebugInfoFixed>(off);
  DebugInfoBody info;
  info.code_addr = fixed.code_addr;
  info.nr_entry = fixed.nr_entry;
  const uint64_t end = off + total;
  const uint64_t capacity = (total - kFixed) / kEntryMin;
  if (info.nr_entry > capacity) {
    AddProblem(dump.problems, off + offsetof(DebugInfoFixed, nr_entry), Severity::kError,
               "DEBUG_INFO nr_entry %" PRIu64 " is larger than the record can hold (at most %" PRIu64
               " entries of 17+ bytes in %" PRIu64 " bytes)",
               info.nr_entry, capacity, total - kFixed);
    record.valid = false;
    record.body = std::move(info);
    return;
  }
  info.entries.reserve(static_cast<size_t>(info.nr_entry));
  uint64_t p = off + kFixed;
  for (uint64_t i = 0; i < info.nr_entry; ++i) {
    if (end - p < kEntryMin) {
      AddProblem(dump.problems, p, Severity::kError,
                 "DEBUG_INFO entry %" PRIu64 " of %" PRIu64 " runs past the record end (offset %" PRIu64 ")", i,
                 info.nr_entry, end);
      info.complete = false;
      record.valid = false;
      break;
    }
    const auto entry = b.Read<DebugEntryFixed>(p);
    const uint64_t name_at = p + sizeof(DebugEntryFixed);
    const std::optional<std::string_view> file = b.CString(name_at, end);
    if (!file) {
      AddProblem(dump.problems, name_at, Severity::kError,
                 "DEBUG_INFO entry %" PRIu64 " file name has no NUL before the record end", i);
      info.complete = false;
      record.valid = false;
      break;
    }
    // Consecutive entries mostly name the same file: one already found plausible need not be
    // checked again.
    const bool same_file = !info.entries.empty() && info.entries.back().file == *file;
    if (!same_file && !PlausibleName(*file)) {
      // node/V8 writes file names from freed memory: garbage with an embedded NUL, after
      // which walking by nr_entry is out of step. total_size is still right, so skip the rest.
      AddProblem(dump.problems, name_at, Severity::kWarning,
                 "DEBUG_INFO entry %" PRIu64 " of %" PRIu64
                 " has a corrupted file name (not printable UTF-8); the remaining entries cannot be "
                 "located by nr_entry and are ignored (known node/V8 defect; perf would mis-read them)",
                 i, info.nr_entry);
      info.complete = false;
      break;
    }
    DebugLine& line = info.entries.emplace_back();
    line.addr = entry.addr;
    line.line = entry.lineno;
    line.discrim = entry.discrim;
    line.file.assign(*file);
    p = name_at + file->size() + 1;
  }
  // Up to 7 bytes may pad the record to an 8-byte boundary; more is a count that is too small.
  if (info.complete && end - p > 7) {
    AddProblem(dump.problems, p, Severity::kWarning, "DEBUG_INFO has %" PRIu64 " unused bytes after its %" PRIu64 " entries",
               end - p, info.nr_entry);
  }
  record.body = std::move(info);
}

void DecodeUnwinding(const RecordBytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  constexpr uint64_t kFixed = sizeof(UnwindingInfoFixed);
  if (!HasRoomFor(off, total, kFixed, "UNWINDING_INFO", "fixed part", record, dump)) return;
  const auto fixed = b.Read<UnwindingInfoFixed>(off);
  const UnwindingBody unwind{fixed.unwind_data_size, fixed.eh_frame_hdr_size, fixed.mapped_size};
  if (unwind.unwind_data_size > total - kFixed) {
    AddProblem(dump.problems, off + offsetof(UnwindingInfoFixed, unwind_data_size), Severity::kError,
               "UNWINDING_INFO unwind_data_size %" PRIu64 " exceeds the %" PRIu64 " bytes in the record",
               unwind.unwind_data_size, total - kFixed);
    record.valid = false;
  } else if (unwind.eh_frame_hdr_size > unwind.unwind_data_size) {
    AddProblem(dump.problems, off + offsetof(UnwindingInfoFixed, eh_frame_hdr_size), Severity::kError,
               "UNWINDING_INFO eh_frame_hdr_size %" PRIu64 " exceeds unwind_data_size %" PRIu64,
               unwind.eh_frame_hdr_size, unwind.unwind_data_size);
    record.valid = false;
  }
  record.body = unwind;
}

// Reads the file header into `dump` from `data`, the file's first bytes (at least the header's
// total_size of them, or the whole file when it is shorter) of a file of `file_size` bytes.
// False when the file is not a jitdump we can read.
bool DecodeHeader(std::span<const uint8_t> data, uint64_t file_size, JitDump& dump) {
  constexpr uint64_t kHeaderSize = sizeof(FileHeader);
  uint32_t magic;
  if (file_size < sizeof magic || data.size() < sizeof magic) {
    AddProblem(dump.problems, 0, Severity::kError, "file is %" PRIu64 " bytes, too short for the jitdump magic",
               file_size);
    return false;
  }
  std::memcpy(&magic, data.data(), sizeof magic);
  if (magic != kMagic && magic != kMagicSwapped) {
    AddProblem(dump.problems, 0, Severity::kError, "bad magic 0x%08x (expected 0x%08x \"JiTD\" in either byte order)",
               magic, kMagic);
    return false;
  }
  dump.cross_endian = magic == kMagicSwapped;
  if (file_size < kHeaderSize || data.size() < kHeaderSize) {
    AddProblem(dump.problems, 0, Severity::kError, "file is %" PRIu64 " bytes, too short for the %" PRIu64 "-byte header",
               file_size, kHeaderSize);
    return false;
  }
  dump.header = ReadStruct<FileHeader>(data, 0, dump.cross_endian);
  const FileHeader& h = dump.header;
  if (h.total_size < kHeaderSize) {
    AddProblem(dump.problems, offsetof(FileHeader, total_size), Severity::kError,
               "header total_size %u is smaller than the %" PRIu64 "-byte header", h.total_size, kHeaderSize);
    return false;
  }
  if (h.total_size > file_size) {
    AddProblem(dump.problems, offsetof(FileHeader, total_size), Severity::kError,
               "header total_size %u runs past the end of the %" PRIu64 "-byte file", h.total_size, file_size);
    return false;
  }
  dump.records_offset = h.total_size;
  return true;
}

// The whole file in memory.
class MemorySource {
 public:
  explicit MemorySource(std::span<const uint8_t> data) : data_(data) {}
  uint64_t size() const { return data_.size(); }
  // Bytes holding [offset, offset + length) (the caller keeps within size()): all of them.
  bool Fetch(uint64_t /*offset*/, uint64_t /*length*/, std::span<const uint8_t>* out, uint64_t* base) {
    *out = data_;
    *base = 0;
    return true;
  }

 private:
  std::span<const uint8_t> data_;
};

// A file read through a window of its bytes with pread: never mapped, so a file cut shorter
// while it is read shows as a truncated tail instead of a SIGBUS, and memory holds only the
// window (at least one whole record) besides what is decoded.
class WindowSource {
 public:
  WindowSource(int fd, uint64_t size, size_t window) : fd_(fd), size_(size), window_(window) {}
  uint64_t size() const { return size_; }
  const Status& error() const { return error_; }
  bool shrank() const { return shrank_; }

  // The window holding the `length` bytes at `offset` (and its file offset in *base); false
  // when the file no longer holds them all (it shrank) or reading failed.
  bool Fetch(uint64_t offset, uint64_t length, std::span<const uint8_t>* out, uint64_t* base) {
    if (offset < begin_ || offset + length > begin_ + held_) {
      const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(length, window_), size_ - offset);
      if (want < length) return false;
      buffer_.resize(static_cast<size_t>(want));
      uint64_t done = 0;
      while (done < want) {
        const ssize_t got = ::pread(fd_, buffer_.data() + done, static_cast<size_t>(want - done),
                                    static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
          error_ = Status::Error("read", errno);
          return false;
        }
        if (got == 0) break;
        done += static_cast<uint64_t>(got);
      }
      begin_ = offset;
      held_ = done;
      if (done < length) {
        shrank_ = true;
        return false;
      }
    }
    *out = std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(held_));
    *base = begin_;
    return true;
  }

 private:
  int fd_;
  uint64_t size_;
  size_t window_;
  std::vector<uint8_t> buffer_;
  uint64_t begin_ = 0;
  uint64_t held_ = 0;
  Status error_;
  bool shrank_ = false;
};

// What decoding `record` added to memory, roughly: the record and the heap blocks its names,
// file names and tables hold.
uint64_t DecodedBytes(const Record& record) {
  auto text = [](const std::string& s) -> uint64_t { return s.size() > 15 ? s.capacity() + 1 : 0; };
  uint64_t bytes = sizeof(Record);
  if (const LoadBody* load = record.load()) bytes += text(load->name);
  if (const DebugInfoBody* info = record.debug_info()) {
    bytes += info->entries.capacity() * sizeof(DebugLine);
    for (const DebugLine& line : info->entries) bytes += text(line.file);
  }
  if (const InlineBody* inl = record.inline_info()) {
    bytes += sizeof(InlineBody) + inl->files.capacity() * sizeof(std::string) +
             inl->function_names.capacity() * sizeof(std::string) +
             inl->functions.capacity() * sizeof(SamplyFunctionRecord) +
             inl->calls.capacity() * sizeof(SamplyInlineCallRecord) + inl->ranges.capacity() * sizeof(SamplyRangeRecord) +
             inl->lines.capacity() * sizeof(SamplyLineRecord) + inl->range_begin.capacity() * sizeof(uint32_t) +
             inl->subtree_end.capacity() * sizeof(uint32_t);
    for (const std::string& s : inl->files) bytes += text(s);
    for (const std::string& s : inl->function_names) bytes += text(s);
  }
  return bytes;
}

bool IsSideRecord(uint32_t id) {
  return id == static_cast<uint32_t>(RecordType::kCodeDebugInfo) ||
         id == static_cast<uint32_t>(RecordType::kSamplyDebugInfo2);
}

// The body of a DEBUG_INFO or inline record, whose bytes `b` holds.
void DecodeSideRecord(const RecordBytes& b, Record& record, JitDump& dump) {
  if (record.id == static_cast<uint32_t>(RecordType::kCodeDebugInfo)) {
    DecodeDebugInfo(b, record.offset, record.total_size, record, dump);
  } else {
    DecodeInlineRecord(b, record.offset, record.total_size, record, dump);
  }
}

// The record loop over any source of the file's bytes. Stops early (returning false) once the
// decoded records hold more than `memory_limit` bytes (0: no limit); *memory counts them. With
// `defer`, side records (IsSideRecord) are kept undecoded, their bytes not even fetched.
template <typename Source>
bool DecodeRecords(Source& source, uint64_t memory_limit, bool defer, JitDump& dump, uint64_t* memory) {
  int64_t pending_debug = -1, pending_inline = -1, pending_unwind = -1;
  uint64_t off = dump.records_offset;
  const uint64_t size = source.size();
  auto truncated = [&](uint64_t left, uint64_t needed) {
    dump.truncated_offset = off;
    dump.truncated_bytes = left;
    dump.truncated_needed = needed;
  };
  while (off < size) {
    const uint64_t left = size - off;
    std::span<const uint8_t> window;
    uint64_t base = 0;
    if (left < sizeof(RecordHeader) || !source.Fetch(off, sizeof(RecordHeader), &window, &base)) {
      truncated(left, 0);
      AddProblem(dump.problems, off, Severity::kWarning,
                 "truncated final record: %" PRIu64 " bytes, not even a 16-byte record header", left);
      break;
    }
    const auto header = RecordBytes(window, dump.cross_endian, base).Read<RecordHeader>(off);
    Record record;
    record.offset = off;
    record.id = header.id;
    record.total_size = header.total_size;
    record.timestamp = header.timestamp;
    if (record.total_size < sizeof(RecordHeader)) {
      AddProblem(dump.problems, off + kTotalSizeAt, Severity::kError,
                 "%s record total_size %u is smaller than 16; cannot continue", RecordTypeName(record.id),
                 record.total_size);
      break;
    }
    // A record larger than the whole budget is not read at all.
    if (memory_limit != 0 && record.total_size > memory_limit) return false;
    record.deferred = defer && IsSideRecord(record.id);
    if (record.total_size > left || (!record.deferred && !source.Fetch(off, record.total_size, &window, &base))) {
      truncated(left, record.total_size);
      AddProblem(dump.problems, off, Severity::kWarning,
                 "truncated final %s record: total_size %u but only %" PRIu64 " bytes left in the file",
                 RecordTypeName(record.id), record.total_size, left);
      break;
    }
    const RecordBytes b(window, dump.cross_endian, base);
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
        if (!record.deferred) DecodeDebugInfo(b, off, total, record, dump);
        pending_debug = index;
        break;
      case RecordType::kCodeClose: break;
      case RecordType::kCodeUnwindingInfo:
        DecodeUnwinding(b, off, total, record, dump);
        pending_unwind = index;
        break;
      case RecordType::kSamplyDebugInfo2:
        if (!record.deferred) DecodeInlineRecord(b, off, total, record, dump);
        pending_inline = index;
        break;
      default: ++dump.unknown_records; break;
    }
    *memory += DecodedBytes(record);
    if (memory_limit != 0 && *memory > memory_limit) return false;
    dump.records.push_back(std::move(record));
    off += total;
  }
  return true;
}

}  // namespace

bool HasRoomFor(uint64_t offset, uint64_t total, uint64_t need, const char* type, const char* part, Record& record,
                JitDump& dump) {
  if (total >= need) return true;
  AddProblem(dump.problems, offset + kTotalSizeAt, Severity::kError,
             "%s total_size %" PRIu64 " is smaller than its %" PRIu64 "-byte %s", type, total, need, part);
  record.valid = false;
  return false;
}

JitDump Parse(std::span<const uint8_t> data) {
  JitDump dump;
  dump.file_size = data.size();
  dump.header_ok = DecodeHeader(data, data.size(), dump);
  if (!dump.header_ok) return dump;
  MemorySource source(data);
  uint64_t memory = 0;
  DecodeRecords(source, 0, false, dump, &memory);
  return dump;
}

Status ParseFile(int fd, uint64_t size, const FileLimits& limits, JitDump* out, uint64_t* decoded_bytes) {
  JitDump& dump = *out;
  uint64_t memory = 0;
  if (decoded_bytes == nullptr) decoded_bytes = &memory;
  *decoded_bytes = 0;
  dump = JitDump();
  dump.file_size = size;
  WindowSource source(fd, size, limits.window);
  // The header's total_size may be up to 4 GiB: read what it says, as far as the file goes.
  std::span<const uint8_t> head;
  uint64_t base = 0;
  const uint64_t head_size = std::min<uint64_t>(size, sizeof(FileHeader));
  if (head_size > 0 && !source.Fetch(0, head_size, &head, &base)) {
    return source.error().ok() ? Status::Error("the file shrank while it was read", 0) : source.error();
  }
  dump.header_ok = DecodeHeader(head, size, dump);
  if (!dump.header_ok) return Status::Ok();
  if (!DecodeRecords(source, limits.memory, limits.defer_side_records, dump, decoded_bytes)) {
    dump.records.clear();
    dump.records.shrink_to_fit();
    return Status::Error("over the memory budget", 0);
  }
  if (!source.error().ok()) return source.error();
  // The records grew by doubling (the count cannot be told from the file's size: a JVM's first
  // loads are stubs, smaller than its later methods), up to twice what they need; copied to
  // their size, the larger block goes back to the heap for what is allocated next.
  dump.records.shrink_to_fit();
  return Status::Ok();
}

Status DecodeDeferred(int fd, JitDump* dump, size_t index, uint64_t memory_limit, uint64_t* decoded_bytes) {
  uint64_t taken = 0;
  if (decoded_bytes == nullptr) decoded_bytes = &taken;
  *decoded_bytes = 0;
  if (index >= dump->records.size() || !dump->records[index].deferred) return Status::Ok();
  const Record& deferred = dump->records[index];
  const Status over = Status::Error("over the memory budget", 0);
  if (memory_limit != 0 && deferred.total_size > memory_limit) return over;
  // Exactly the record's bytes (the window is never smaller than what is fetched).
  WindowSource source(fd, deferred.offset + deferred.total_size, 0);
  std::span<const uint8_t> bytes;
  uint64_t base = 0;
  if (!source.Fetch(deferred.offset, deferred.total_size, &bytes, &base)) {
    return source.error().ok() ? Status::Error("the file shrank while it was read", 0) : source.error();
  }
  Record record;
  record.offset = deferred.offset;
  record.id = deferred.id;
  record.total_size = deferred.total_size;
  record.timestamp = deferred.timestamp;
  DecodeSideRecord(RecordBytes(bytes, dump->cross_endian, base), record, *dump);
  *decoded_bytes = DecodedBytes(record) - sizeof(Record);  // the record itself was counted when parsed
  if (memory_limit != 0 && *decoded_bytes > memory_limit) return over;
  dump->records[index] = std::move(record);
  return Status::Ok();
}

}  // namespace jitdump
