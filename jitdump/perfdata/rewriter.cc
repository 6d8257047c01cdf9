#include "jitdump/perfdata/rewriter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <span>
#include <vector>

#include "jitdump/perfdata/byte_source.h"
#include "jitdump/perfdata/cursor.h"
#include "jitdump/perfdata/decompressor.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::perfdata {
namespace {

constexpr uint64_t kPipeHeaderSize = 16;
constexpr uint64_t kFileHeaderSize = 104;
constexpr uint64_t kOldFileHeaderSize = 72;
// Where the file name starts in an MMAP and an MMAP2 record (header included).
constexpr size_t kMmapName = 8 + 32;
constexpr size_t kMmap2Name = 8 + 64;

void Put16(uint8_t* p, uint16_t v, bool swap) {
  v = Swapped(v, swap);
  std::memcpy(p, &v, 2);
}
void Put64(uint8_t* p, uint64_t v, bool swap) {
  v = Swapped(v, swap);
  std::memcpy(p, &v, 8);
}

bool PreadAll(int fd, uint8_t* out, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  bool Write(std::span<const uint8_t> bytes) {
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    written_ += bytes.size();
    return buffer_.size() < (1u << 20) || Flush();
  }
  bool Flush() {
    size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = errno;
        return false;
      }
      done += static_cast<size_t>(n);
    }
    buffer_.clear();
    return true;
  }
  uint64_t written() const { return written_; }
  int error() const { return error_; }

 private:
  int fd_;
  std::vector<uint8_t> buffer_;
  uint64_t written_ = 0;
  int error_ = 0;
};

class Copier {
 public:
  Copier(const RenameMmap& rename, bool swap, Writer& out, RewriteStats* stats)
      : rename_(rename), swap_(swap), out_(out), stats_(stats) {}

  // One record (a whole one: header.size bytes). False with error_ set.
  bool Record(std::span<const uint8_t> record, uint64_t offset, bool inner) {
    Cursor c(record, swap_);
    const uint32_t type = c.U32();
    c.U16();
    const uint16_t size = c.U16();
    if (type == kRecordCompressed || type == kRecordCompressed2) {
      if (inner) return Fail("a compressed record inside compressed data", offset);
      return Decompress(record, type, offset);
    }
    ++stats_->records;
    if (type == kRecordMmap || type == kRecordMmap2) {
      const size_t name_at = type == kRecordMmap ? kMmapName : kMmap2Name;
      if (size > name_at) return Mmap(record, name_at, offset);
    }
    return Emit(record);
  }

  bool Finish() {
    if (!pending_.empty()) return Fail("the compressed data ends inside a record", last_compressed_);
    return true;
  }

  // Bytes that follow a record outside its size (tracing data, AUX data), as they are.
  bool Raw(std::span<const uint8_t> bytes) { return Emit(bytes); }

  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& what, uint64_t offset) {
    error_ = what + " at offset " + std::to_string(offset);
    return false;
  }
  bool Emit(std::span<const uint8_t> bytes) {
    if (out_.Write(bytes)) return true;
    error_ = std::string("writing the copy: ") + std::strerror(out_.error());
    return false;
  }

  bool Mmap(std::span<const uint8_t> record, size_t name_at, uint64_t offset) {
    const uint32_t pid = LoadU32(record.data() + 8, swap_);
    const std::span<const uint8_t> tail = record.subspan(name_at);
    const void* nul = std::memchr(tail.data(), 0, tail.size());
    const size_t length = nul ? static_cast<const uint8_t*>(nul) - tail.data() : tail.size();
    const std::string_view name(reinterpret_cast<const char*>(tail.data()), length);
    const std::optional<std::string> renamed = rename_(pid, name);
    if (!renamed || *renamed == name) return Emit(record);
    // The name is NUL-terminated and padded to 8 bytes; what follows is the sample_id trailer.
    const size_t region = std::min(tail.size(), (length + 1 + 7) & ~size_t{7});
    std::vector<uint8_t> out(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(name_at));
    out.insert(out.end(), renamed->begin(), renamed->end());
    out.resize(name_at + ((renamed->size() + 1 + 7) & ~size_t{7}), 0);
    out.insert(out.end(), tail.begin() + static_cast<std::ptrdiff_t>(region), tail.end());
    if (out.size() > 0xFFFF) return Fail("the renamed record is larger than a record can be", offset);
    Put16(out.data() + 6, static_cast<uint16_t>(out.size()), swap_);
    ++stats_->renamed;
    return Emit(out);
  }

  bool Decompress(std::span<const uint8_t> record, uint32_t type, uint64_t offset) {
    ++stats_->decompressed;
    last_compressed_ = offset;
    std::span<const uint8_t> payload = record.subspan(kRecordHeaderSize);
    if (type == kRecordCompressed2) {
      Cursor c(payload, swap_);
      const uint64_t n = c.U64();
      if (!c.ok() || n > payload.size() - 8) return Fail("a damaged COMPRESSED2 record", offset);
      payload = payload.subspan(8, static_cast<size_t>(n));
    }
    bool ok = true;
    const bool fed = zstd_.Feed(payload, 64u << 20, [&](std::span<const uint8_t> chunk) {
      pending_.insert(pending_.end(), chunk.begin(), chunk.end());
      size_t pos = 0;
      while (ok && pending_.size() - pos >= kRecordHeaderSize) {
        uint16_t raw;
        std::memcpy(&raw, pending_.data() + pos + 6, 2);
        const uint16_t host = Swapped(raw, swap_);
        if (host < kRecordHeaderSize) {
          ok = Fail("a damaged record inside the compressed data", offset);
          break;
        }
        if (pending_.size() - pos < host) break;
        ok = Record(std::span<const uint8_t>(pending_.data() + pos, host), offset, true);
        pos += host;
      }
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pos));
    });
    if (!fed) return Fail("the compressed data cannot be read (" + zstd_.error() + ")", offset);
    return ok;
  }

  const RenameMmap& rename_;
  bool swap_;
  Writer& out_;
  RewriteStats* stats_;
  Decompressor zstd_;
  std::vector<uint8_t> pending_;
  uint64_t last_compressed_ = 0;
  std::string error_;
};

// Copies the records of `source` through `copier` until the data ends.
bool CopyRecords(ByteSource& source, Copier& copier, bool swap, std::string* error) {
  for (;;) {
    const uint64_t offset = source.position();
    const std::span<const uint8_t> head = source.Peek(kRecordHeaderSize);
    if (head.empty()) break;
    if (head.size() < kRecordHeaderSize) {
      *error = "the data ends inside a record header at offset " + std::to_string(offset);
      return false;
    }
    Cursor c(head, swap);
    const uint32_t type = c.U32();
    c.U16();
    const uint16_t size = c.U16();
    if (size < kRecordHeaderSize) {
      *error = "damaged record (size " + std::to_string(size) + ") at offset " + std::to_string(offset);
      return false;
    }
    const std::span<const uint8_t> record = source.Peek(size);
    if (record.size() < size) {
      *error = "the data ends inside a record at offset " + std::to_string(offset);
      return false;
    }
    if (!copier.Record(record, offset, false)) {
      *error = copier.error();
      return false;
    }
    uint64_t extra = 0;
    if ((type == kRecordHeaderTracingData || type == kRecordAuxtrace) && size >= 16) {
      extra = type == kRecordAuxtrace ? LoadU64(record.data() + 8, swap) : LoadU32(record.data() + 8, swap);
    }
    source.Skip(size);
    // Data outside the record's size (tracing data, AUX data) is copied as it is.
    while (extra > 0) {
      const std::span<const uint8_t> chunk = source.Peek(static_cast<size_t>(std::min<uint64_t>(extra, ByteSource::kMaxPeek)));
      if (chunk.empty()) {
        *error = "the data ends inside the payload of the record at offset " + std::to_string(offset);
        return false;
      }
      if (!copier.Raw(chunk)) {
        *error = copier.error();
        return false;
      }
      extra -= chunk.size();
      source.Skip(chunk.size());
    }
  }
  if (source.error() != 0) {
    *error = std::string("reading: ") + std::strerror(source.error());
    return false;
  }
  if (!copier.Finish()) {
    *error = copier.error();
    return false;
  }
  return true;
}

}  // namespace

bool RewriteMmapNames(int in_fd, int out_fd, const RenameMmap& rename, RewriteStats* stats, std::string* error) {
  *stats = RewriteStats{};
  struct stat st;
  if (::fstat(in_fd, &st) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  const bool seekable = S_ISREG(st.st_mode);
  uint8_t start[kFileHeaderSize];
  size_t have = 0;
  while (have < kPipeHeaderSize) {
    const ssize_t got = seekable ? ::pread(in_fd, start + have, kPipeHeaderSize - have, static_cast<off_t>(have))
                                 : ::read(in_fd, start + have, kPipeHeaderSize - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
  }
  uint64_t magic = 0;
  if (have == kPipeHeaderSize) std::memcpy(&magic, start, 8);
  if (magic != kMagic && magic != kMagicSwapped) {
    *error = "not a perf.data file (no PERFILE2 magic)";
    return false;
  }
  const bool swap = magic == kMagicSwapped;
  const uint64_t header_size = LoadU64(start + 8, swap);
  Writer out(out_fd);

  if (header_size == kPipeHeaderSize) {
    // A stream: its header, then every record.
    ByteSource source = seekable ? ByteSource::File(in_fd, kPipeHeaderSize, UINT64_MAX)
                                 : ByteSource::Stream(in_fd, kPipeHeaderSize);
    Copier copier(rename, swap, out, stats);
    if (!out.Write(std::span<const uint8_t>(start, kPipeHeaderSize)) ||
        !CopyRecords(source, copier, swap, error)) {
      return false;
    }
    if (!out.Flush()) {
      *error = std::string("writing the copy: ") + std::strerror(out.error());
      return false;
    }
    return true;
  }

  if (!seekable || (header_size != kFileHeaderSize && header_size != kOldFileHeaderSize)) {
    *error = "a file format perf.data header of " + std::to_string(header_size) + " bytes" +
             (seekable ? " is none perf writes" : " cannot be read from a pipe");
    return false;
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  std::vector<uint8_t> header(header_size);
  if (!PreadAll(in_fd, header.data(), header.size(), 0)) {
    *error = "the file ends inside its header";
    return false;
  }
  const uint64_t attr_size = LoadU64(header.data() + 16, swap);
  const uint64_t attrs_offset = LoadU64(header.data() + 24, swap);
  const uint64_t attrs_size = LoadU64(header.data() + 32, swap);
  const uint64_t data_offset = LoadU64(header.data() + 40, swap);
  const uint64_t data_size = LoadU64(header.data() + 48, swap);
  if (data_offset < header_size || data_offset > file_size || data_size > file_size - data_offset || data_size == 0) {
    *error = "the data section (" + std::to_string(data_size) + " bytes at offset " + std::to_string(data_offset) +
             ") is not inside the file, or empty (perf record did not finish)";
    return false;
  }
  const uint64_t data_end = data_offset + data_size;

  // Everything before the data as it is (header, events, ids), the header patched at the end.
  std::vector<uint8_t> before(data_offset);
  if (!PreadAll(in_fd, before.data(), before.size(), 0) || !out.Write(before)) {
    *error = "copying the header and events failed";
    return false;
  }
  ByteSource source = ByteSource::File(in_fd, data_offset, data_end);
  Copier copier(rename, swap, out, stats);
  if (!CopyRecords(source, copier, swap, error)) return false;
  const uint64_t new_data_size = out.written() - data_offset;
  const int64_t delta = static_cast<int64_t>(new_data_size) - static_cast<int64_t>(data_size);
  auto moved = [&](uint64_t offset) { return offset >= data_end ? offset + static_cast<uint64_t>(delta) : offset; };

  // What follows the data (the feature table and sections, events placed after the data), with
  // every offset into it moved.
  std::vector<uint8_t> after(file_size - data_end);
  if (!after.empty() && !PreadAll(in_fd, after.data(), after.size(), data_end)) {
    *error = "reading the feature sections failed";
    return false;
  }
  size_t sections = 0;
  if (header_size == kFileHeaderSize) {
    for (int w = 0; w < 4; ++w) sections += static_cast<size_t>(std::popcount(LoadU64(header.data() + 72 + 8 * w, swap)));
  }
  for (size_t i = 0; i < sections && 16 * (i + 1) <= after.size(); ++i) {
    uint8_t* entry = after.data() + 16 * i;
    Put64(entry, moved(LoadU64(entry, swap)), swap);
  }
  if (!out.Write(after) || !out.Flush()) {
    *error = std::string("writing the copy: ") + std::strerror(out.error());
    return false;
  }
  // The header and the events' ids sections, moved where they point past the data.
  Put64(header.data() + 24, moved(attrs_offset), swap);
  Put64(header.data() + 48, new_data_size, swap);
  Put64(header.data() + 56, moved(LoadU64(header.data() + 56, swap)), swap);
  std::vector<uint8_t> attrs;
  if (attr_size >= 16 && attrs_size / attr_size < 65536) {
    attrs.resize(attrs_size / attr_size * attr_size);
    if (PreadAll(in_fd, attrs.data(), attrs.size(), attrs_offset)) {
      for (size_t at = static_cast<size_t>(attr_size - 16); at + 16 <= attrs.size(); at += attr_size) {
        Put64(attrs.data() + at, moved(LoadU64(attrs.data() + at, swap)), swap);
      }
      const uint64_t where = moved(attrs_offset);
      if (::pwrite(out_fd, attrs.data(), attrs.size(), static_cast<off_t>(where)) != static_cast<ssize_t>(attrs.size())) {
        *error = std::string("writing the events: ") + std::strerror(errno);
        return false;
      }
    }
  }
  if (::pwrite(out_fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size())) {
    *error = std::string("writing the header: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace jitdump::perfdata
