// Whole-record copying of a growing jitdump (see follow_copy.h).
#include "jitdump/tool/follow_copy.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "jitdump/format/dump_format.h"
#include "jitdump/read/byte_order.h"

namespace jitdump::tool {
namespace {

// A record larger than this is taken for garbage (a torn or corrupt size field) and waited on,
// never allocated: the largest code blob HotSpot emits is a few MiB.
constexpr uint32_t kLargestRecord = 256u << 20;
constexpr size_t kChunk = 1u << 20;

// pread until `size` bytes or the end of the file; returns the count, or -1 with errno set.
ssize_t ReadAt(int fd, uint8_t* data, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

void StoreU32(uint8_t* at, uint32_t value, bool cross_endian) {
  if (cross_endian) value = __builtin_bswap32(value);
  std::memcpy(at, &value, sizeof value);
}

// The pid and tid of CODE_LOAD and CODE_MOVE sit right after the record header in both.
static_assert(offsetof(CodeLoadFixed, pid) == sizeof(RecordHeader));
static_assert(offsetof(CodeMoveRecord, pid) == sizeof(RecordHeader));
static_assert(offsetof(CodeLoadFixed, tid) == sizeof(RecordHeader) + 4);
static_assert(offsetof(CodeMoveRecord, tid) == sizeof(RecordHeader) + 4);

}  // namespace

void FollowCopy::StampPid(uint8_t* record, const RecordHeader& header) const {
  if (!options_.pid || header.total_size < sizeof(RecordHeader) + 8) return;
  if (header.id != static_cast<uint32_t>(RecordType::kCodeLoad) &&
      header.id != static_cast<uint32_t>(RecordType::kCodeMove)) {
    return;
  }
  StoreU32(record + sizeof(RecordHeader), *options_.pid, cross_endian_);
  StoreU32(record + sizeof(RecordHeader) + 4, *options_.pid, cross_endian_);
}

bool FollowCopy::WriteAll(const uint8_t* data, size_t size, std::string* error) {
  while (size != 0) {
    const ssize_t n = ::write(dest_fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = std::string("write: ") + std::strerror(n < 0 ? errno : EIO);
      failed_ = true;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool FollowCopy::CopyHeader(std::string* error) {
  uint8_t fixed[sizeof(FileHeader)];
  const ssize_t got = ReadAt(source_fd_, fixed, sizeof fixed, 0);
  if (got < 0) {
    *error = std::string("read: ") + std::strerror(errno);
    failed_ = true;
    return false;
  }
  pending_bytes_ = static_cast<uint64_t>(got);
  if (got < static_cast<ssize_t>(sizeof fixed)) return true;  // the producer has not written it yet
  uint32_t magic;
  std::memcpy(&magic, fixed, sizeof magic);
  if (magic != kMagic && magic != kMagicSwapped) {
    *error = "not a jitdump (no JiTD magic at offset 0)";
    failed_ = true;
    return false;
  }
  cross_endian_ = magic == kMagicSwapped;
  const FileHeader header = ReadStruct<FileHeader>(fixed, 0, cross_endian_);
  if (header.total_size < sizeof(FileHeader) || header.total_size > kChunk) {
    *error = "header size " + std::to_string(header.total_size) + " is not a jitdump header's";
    failed_ = true;
    return false;
  }
  std::vector<uint8_t> whole(header.total_size);
  const ssize_t whole_got = ReadAt(source_fd_, whole.data(), whole.size(), 0);
  if (whole_got < 0) {
    *error = std::string("read: ") + std::strerror(errno);
    failed_ = true;
    return false;
  }
  if (static_cast<size_t>(whole_got) < whole.size()) return true;
  if (options_.pid) StoreU32(whole.data() + offsetof(FileHeader, pid), *options_.pid, cross_endian_);
  if (!WriteAll(whole.data(), whole.size(), error)) return false;
  have_header_ = true;
  offset_ = whole.size();
  pending_bytes_ = 0;
  return true;
}

bool FollowCopy::CopyAvailable(std::string* error) {
  if (failed_) {
    *error = "an earlier error stopped this copy";
    return false;
  }
  if (!have_header_) {
    if (!CopyHeader(error)) return false;
    if (!have_header_) return true;
  }
  std::vector<uint8_t> buffer;
  while (true) {
    buffer.resize(kChunk);
    const ssize_t got = ReadAt(source_fd_, buffer.data(), buffer.size(), offset_);
    if (got < 0) {
      *error = std::string("read: ") + std::strerror(errno);
      failed_ = true;
      return false;
    }
    const size_t available = static_cast<size_t>(got);
    size_t used = 0;
    while (available - used >= sizeof(RecordHeader)) {
      const RecordHeader header = ReadStruct<RecordHeader>(buffer, used, cross_endian_);
      // A size too small for a record, or too large to be one, is a record not written yet
      // (or torn): wait for it rather than copy bytes perf would misread.
      if (header.total_size < sizeof(RecordHeader) || header.total_size > kLargestRecord) break;
      if (header.total_size > available - used) break;
      StampPid(buffer.data() + used, header);
      used += header.total_size;
      ++records_;
    }
    if (used == 0 && available >= sizeof(RecordHeader)) {
      // One record larger than the chunk: read exactly it.
      const RecordHeader header = ReadStruct<RecordHeader>(buffer, 0, cross_endian_);
      if (header.total_size > available && header.total_size <= kLargestRecord) {
        buffer.resize(header.total_size);
        const ssize_t whole = ReadAt(source_fd_, buffer.data(), buffer.size(), offset_);
        if (whole < 0) {
          *error = std::string("read: ") + std::strerror(errno);
          failed_ = true;
          return false;
        }
        if (static_cast<size_t>(whole) == buffer.size()) {
          StampPid(buffer.data(), header);
          if (!WriteAll(buffer.data(), buffer.size(), error)) return false;
          offset_ += buffer.size();
          ++records_;
          continue;
        }
      }
    }
    if (used != 0 && !WriteAll(buffer.data(), used, error)) return false;
    offset_ += used;
    pending_bytes_ = available - used;
    if (used == 0 || available < kChunk) return true;
  }
}

}  // namespace jitdump::tool
