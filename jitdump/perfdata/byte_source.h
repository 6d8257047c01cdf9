// The bytes of a recording's data, read front to back through a window of bounded size: from a
// file between two offsets (pread, so a second pass can start again), or from a stream (a pipe:
// `perf record -o - | jitdump report -`) until its end. Memory is the window, whatever the
// recording's size; a short read at the end is the caller's to report, never a fault.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace jitdump::perfdata {

class ByteSource {
 public:
  // The largest span Peek hands out: a whole record (header.size is 16 bits).
  static constexpr size_t kMaxPeek = 1 << 16;

  // A file's bytes [begin, end); end UINT64_MAX: up to the end of the file. `fd` is not owned.
  static ByteSource File(int fd, uint64_t begin, uint64_t end);
  // A stream's bytes from where it stands. `fd` is not owned. `position` is the offset the
  // stream's first byte has in the recording (for messages).
  static ByteSource Stream(int fd, uint64_t position);

  // The next `n` bytes (n <= kMaxPeek), or fewer when the data ends first (or a read fails:
  // error() then says so). Valid until the next call.
  std::span<const uint8_t> Peek(size_t n) {
    // Mostly buffered already: two per record, hundreds of thousands of records.
    if (n <= tail_ - head_ && n <= kMaxPeek) return std::span<const uint8_t>(buffer_.data() + head_, n);
    return PeekFilling(n);
  }
  // Moves past `n` bytes (any number: data outside the records, such as AUX payloads); false
  // when the data ends first.
  bool Skip(uint64_t n) {
    if (n <= tail_ - head_) {
      head_ += static_cast<size_t>(n);
      position_ += n;
      return true;
    }
    return SkipUnbuffered(n);
  }
  // The recording's offset of the next byte.
  uint64_t position() const { return position_; }
  // errno of a failed read, 0 when none failed.
  int error() const { return error_; }

 private:
  ByteSource(int fd, bool file, uint64_t begin, uint64_t end);
  // Reads until `n` bytes are buffered or the data ends.
  void Fill(size_t n);
  // Peek and Skip when the buffer does not hold `n` bytes.
  std::span<const uint8_t> PeekFilling(size_t n);
  bool SkipUnbuffered(uint64_t n);

  int fd_;
  bool file_;
  uint64_t next_read_;  // file: the offset the next pread reads from
  uint64_t end_;
  uint64_t position_;
  std::vector<uint8_t> buffer_;
  size_t head_ = 0;  // first unread byte in buffer_
  size_t tail_ = 0;  // end of the buffered bytes
  bool eof_ = false;
  int error_ = 0;
};

}  // namespace jitdump::perfdata
