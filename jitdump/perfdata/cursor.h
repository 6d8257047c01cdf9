// Reading fields out of untrusted bytes: a Cursor walks a span and never reads past its end
// (a read that does not fit fails and leaves the cursor failed for good, so a parser checks
// once at the end). Fields are in the recording's byte order; `swap` turns them into the host's.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace jitdump::perfdata {

inline uint16_t Swapped(uint16_t v, bool swap) { return swap ? __builtin_bswap16(v) : v; }
inline uint32_t Swapped(uint32_t v, bool swap) { return swap ? __builtin_bswap32(v) : v; }
inline uint64_t Swapped(uint64_t v, bool swap) { return swap ? __builtin_bswap64(v) : v; }

// A u64 at `p` (any alignment) in host order.
inline uint64_t LoadU64(const uint8_t* p, bool swap) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return Swapped(v, swap);
}
inline uint32_t LoadU32(const uint8_t* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return Swapped(v, swap);
}

// A view of `count` u64 values in the recording's byte order (a call chain, registers, the
// values of a read): no copy, no alignment needed.
class U64Array {
 public:
  U64Array() = default;
  U64Array(const uint8_t* data, size_t count, bool swap) : data_(data), count_(count), swap_(swap) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint64_t operator[](size_t i) const { return LoadU64(data_ + 8 * i, swap_); }
  std::span<const uint8_t> bytes() const { return {data_, 8 * count_}; }

 private:
  const uint8_t* data_ = nullptr;
  size_t count_ = 0;
  bool swap_ = false;
};

class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, bool swap) : data_(bytes.data()), size_(bytes.size()), swap_(swap) {}

  bool ok() const { return ok_; }
  size_t offset() const { return pos_; }
  size_t remaining() const { return ok_ ? size_ - pos_ : 0; }
  bool swap() const { return swap_; }

  uint64_t U64() {
    if (!Need(8)) return 0;
    const uint64_t v = LoadU64(data_ + pos_, swap_);
    pos_ += 8;
    return v;
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    const uint32_t v = LoadU32(data_ + pos_, swap_);
    pos_ += 4;
    return v;
  }
  uint16_t U16() {
    if (!Need(2)) return 0;
    uint16_t v;
    std::memcpy(&v, data_ + pos_, 2);
    pos_ += 2;
    return Swapped(v, swap_);
  }
  uint8_t U8() {
    if (!Need(1)) return 0;
    return data_[pos_++];
  }
  // `n` raw bytes.
  std::span<const uint8_t> Bytes(uint64_t n) {
    if (!Need(n)) return {};
    const std::span<const uint8_t> out(data_ + pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }
  // `n` u64 values; fails when n * 8 does not fit.
  U64Array U64s(uint64_t n) {
    if (n > (size_ - pos_) / 8 || !ok_) {
      ok_ = false;
      return {};
    }
    const U64Array out(data_ + pos_, static_cast<size_t>(n), swap_);
    pos_ += static_cast<size_t>(n) * 8;
    return out;
  }
  void Skip(uint64_t n) { (void)Bytes(n); }
  // A string in a fixed-size field: up to the first NUL inside the next `n` bytes.
  std::string_view CString(uint64_t n) {
    const std::span<const uint8_t> field = Bytes(n);
    const char* text = reinterpret_cast<const char*>(field.data());
    const void* nul = field.empty() ? nullptr : std::memchr(text, 0, field.size());
    return std::string_view(text, nul ? static_cast<const char*>(nul) - text : field.size());
  }
  // perf_header_string: u32 length, then that many bytes holding a NUL-terminated string.
  std::string_view HeaderString() { return CString(U32()); }
  // The rest, as a string up to its first NUL.
  std::string_view RestAsCString() { return CString(remaining()); }

 private:
  bool Need(uint64_t n) {
    if (!ok_ || n > size_ - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool swap_;
  bool ok_ = true;
};

}  // namespace jitdump::perfdata
