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

#include <cstdint>
#include <string>
#include <string_view>

namespace jitdump::report {

class ProtoEncoder {
 public:
  // Wire types (the low three bits of a field's tag).
  static constexpr uint32_t kVarint = 0;
  static constexpr uint32_t kLengthDelimited = 2;

  std::string& bytes() { return bytes_; }
  size_t size() const { return bytes_.size(); }
  void clear() { bytes_.clear(); }

  void Varint(uint64_t value) {
    char buffer[10];
    size_t n = 0;
    while (value >= 0x80) {
      buffer[n++] = static_cast<char>(value | 0x80);
      value >>= 7;
    }
    buffer[n++] = static_cast<char>(value);
    bytes_.append(buffer, n);
  }
  void Tag(uint32_t field, uint32_t wire_type) { Varint(uint64_t{field} << 3 | wire_type); }

  // A proto3 scalar (uint64, int64 as its two's complement, bool): nothing when it is 0.
  void VarintField(uint32_t field, uint64_t value) {
    if (value == 0) return;
    Tag(field, kVarint);
    Varint(value);
  }
  // A string or bytes field, written even when empty (a repeated string's empty entries count).
  void BytesField(uint32_t field, std::string_view value) {
    Tag(field, kLengthDelimited);
    Varint(value.size());
    bytes_.append(value);
  }
  // A nested message or a packed repeated field whose bytes another encoder holds.
  void MessageField(uint32_t field, const ProtoEncoder& message) { BytesField(field, message.bytes_); }

 private:
  std::string bytes_;
};

}  // namespace jitdump::report
