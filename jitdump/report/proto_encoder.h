// Protocol buffers' wire format, written straight into a byte buffer: what the pprof writer needs
// to encode profile.proto without building a message object per sample, location and function
// (the objects, their allocations and the library's reflection-free serializer walk cost more
// than the encoding itself on a profile of hundreds of thousands of entries).
//
// Fields are written in the order they are called; a caller that wants the bytes protobuf's own
// serializer makes writes each message's fields in field-number order and leaves out the proto3
// fields that hold their default (0, false, empty): WriteVarintField and friends skip zeros, as
// the generated code does for a proto3 scalar.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace jitdump::report {

class ProtoEncoder {
 public:
  // Wire types (the low three bits of a field's tag).
  static constexpr uint32_t kVarint = 0;
  static constexpr uint32_t kLengthDelimited = 2;

  // The bytes a varint of `value` takes.
  static size_t VarintSize(uint64_t value) {
    size_t n = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++n;
    }
    return n;
  }

  std::string_view bytes() const { return std::string_view(data_.get(), size_); }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }
  // Makes room for `n` bytes in all, so that writing up to them allocates nothing more.
  void Reserve(size_t n) {
    if (n > size_) Room(n - size_);
  }

  void Varint(uint64_t value) {
    char* p = PutVarint(Room(10), value);
    size_ = static_cast<size_t>(p - data_.get());
  }
  // Varints of `values` one after the other (a packed repeated field's contents), with one check
  // for room instead of one per value.
  template <typename Values, typename ToWire>
  void Varints(const Values& values, ToWire to_wire) {
    char* p = Room(10 * std::size(values));
    for (const auto& v : values) p = PutVarint(p, to_wire(v));
    size_ = static_cast<size_t>(p - data_.get());
  }
  void Tag(uint32_t field, uint32_t wire_type) { Varint(uint64_t{field} << 3 | wire_type); }
  // The start of a length-delimited field whose `length` bytes the caller writes next.
  void LengthDelimited(uint32_t field, uint64_t length) {
    Tag(field, kLengthDelimited);
    Varint(length);
  }

  // A proto3 scalar (uint64, int64 as its two's complement, bool): nothing when it is 0.
  void VarintField(uint32_t field, uint64_t value) {
    if (value == 0) return;
    Tag(field, kVarint);
    Varint(value);
  }
  // A string or bytes field, written even when empty (a repeated string's empty entries count).
  void BytesField(uint32_t field, std::string_view value) {
    LengthDelimited(field, value.size());
    Append(value);
  }
  // A nested message or a packed repeated field whose bytes another encoder holds.
  void MessageField(uint32_t field, const ProtoEncoder& message) { BytesField(field, message.bytes()); }
  void Append(std::string_view bytes) {
    char* p = Room(bytes.size());
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    size_ += bytes.size();
  }

 private:
  static char* PutVarint(char* p, uint64_t value) {
    while (value >= 0x80) {
      *p++ = static_cast<char>(value | 0x80);
      value >>= 7;
    }
    *p++ = static_cast<char>(value);
    return p;
  }

  // Where `n` more bytes go. Called for every varint, so the check stays inline and the growth
  // (by doubling; bytes past size_ are scratch) does not.
  char* Room(size_t n) {
    if (capacity_ - size_ < n) Grow(n);
    return data_.get() + size_;
  }
  [[gnu::noinline]] void Grow(size_t n) {
    const size_t capacity = std::max(2 * capacity_, size_ + n + 4096);
    std::unique_ptr<char[]> data(new char[capacity]);
    if (size_ != 0) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace jitdump::report
