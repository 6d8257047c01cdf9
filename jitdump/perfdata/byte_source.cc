#include "jitdump/perfdata/byte_source.h"

#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace jitdump::perfdata {
namespace {

// Reads ahead in blocks this size: large enough that the system calls cost nothing next to
// the parsing (about 120 preads a pass over the bench's 34 MB recording), small enough that
// the block is still in the core's cache when its records are parsed. With 1 MiB blocks the
// side-band pass's first read of each record's header was a sizeable part of that pass;
// 256 KiB made the sample pass faster in 8 of 10 paired runs (docs/measurements.md).
constexpr size_t kReadBlock = 1 << 18;

}  // namespace

ByteSource::ByteSource(int fd, bool file, uint64_t begin, uint64_t end)
    : fd_(fd), file_(file), next_read_(begin), end_(end), position_(begin) {
  // A small recording needs no more than its own size.
  const uint64_t data = file && end != UINT64_MAX && end > begin ? end - begin : UINT64_MAX;
  buffer_.resize(static_cast<size_t>(std::min<uint64_t>(kMaxPeek + kReadBlock, data + kMaxPeek)));
}

ByteSource ByteSource::File(int fd, uint64_t begin, uint64_t end) { return ByteSource(fd, true, begin, end); }

ByteSource ByteSource::Stream(int fd, uint64_t position) { return ByteSource(fd, false, position, UINT64_MAX); }

void ByteSource::Fill(size_t n) {
  if (tail_ - head_ >= n || eof_) return;
  if (head_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }
  while (tail_ < n && !eof_) {
    size_t want = buffer_.size() - tail_;
    if (file_ && end_ != UINT64_MAX) {
      const uint64_t left = end_ > next_read_ ? end_ - next_read_ : 0;
      if (left < want) want = static_cast<size_t>(left);
    }
    if (want == 0) {
      eof_ = true;
      break;
    }
    const ssize_t got = file_ ? ::pread(fd_, buffer_.data() + tail_, want, static_cast<off_t>(next_read_))
                              : ::read(fd_, buffer_.data() + tail_, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      eof_ = true;
      break;
    }
    if (got == 0) {
      eof_ = true;
      break;
    }
    tail_ += static_cast<size_t>(got);
    next_read_ += static_cast<uint64_t>(got);
  }
}

std::span<const uint8_t> ByteSource::PeekFilling(size_t n) {
  if (n > kMaxPeek) n = kMaxPeek;
  Fill(n);
  const size_t have = tail_ - head_;
  return std::span<const uint8_t>(buffer_.data() + head_, have < n ? have : n);
}

bool ByteSource::SkipUnbuffered(uint64_t n) {
  const size_t buffered = tail_ - head_;
  n -= buffered;
  position_ += buffered;
  head_ = tail_ = 0;
  if (file_) {
    const uint64_t left = end_ == UINT64_MAX ? UINT64_MAX : end_ - next_read_;
    if (n > left) {
      position_ += left;
      next_read_ = end_;
      eof_ = true;
      return false;
    }
    next_read_ += n;
    position_ += n;
    // Past the end of the file: the next read finds nothing, as it should.
    return true;
  }
  while (n > 0) {
    const size_t want = n < buffer_.size() ? static_cast<size_t>(n) : buffer_.size();
    const ssize_t got = ::read(fd_, buffer_.data(), want);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) error_ = errno;
      eof_ = true;
      return false;
    }
    n -= static_cast<uint64_t>(got);
    position_ += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace jitdump::perfdata
