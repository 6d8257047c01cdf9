// Internal to the decoder (decoder.cc and inline_record_decoder.cc), not for users of the read
// half: the file's bytes with their byte order, read only at offsets the caller has bounded.
// Offsets are the file's: the bytes held may be a window of the file starting at `base` (a
// file read record by record), or the whole file (base 0).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "jitdump/read/byte_order.h"
#include "jitdump/read/dump.h"

namespace jitdump {

class RecordBytes {
 public:
  RecordBytes(std::span<const uint8_t> data, bool cross_endian, uint64_t base = 0)
      : data_(data), cross_endian_(cross_endian), base_(base) {}

  // A dump_format.h struct (or a plain field) at file offset `offset`, in host byte order.
  template <typename T>
  T Read(uint64_t offset) const {
    return ReadStruct<T>(data_, offset - base_, cross_endian_);
  }
  uint8_t Byte(uint64_t offset) const { return data_[offset - base_]; }

  // The NUL-terminated string starting at `begin` whose NUL lies before `end`; nullopt when
  // there is no NUL in [begin, end).
  std::optional<std::string_view> CString(uint64_t begin, uint64_t end) const {
    if (begin >= end) return std::nullopt;
    const auto* start = reinterpret_cast<const char*>(data_.data() + (begin - base_));
    const void* nul = std::memchr(start, 0, end - begin);
    if (nul == nullptr) return std::nullopt;
    return std::string_view(start, static_cast<size_t>(static_cast<const char*>(nul) - start));
  }

 private:
  std::span<const uint8_t> data_;
  bool cross_endian_;
  uint64_t base_;
};

// True when a record of `total` bytes at `offset` holds the `need` bytes its type cannot do
// without. Otherwise adds "TYPE total_size N is smaller than its M-byte PART" and marks the record
// invalid.
bool HasRoomFor(uint64_t offset, uint64_t total, uint64_t need, const char* type, const char* part, Record& record,
                JitDump& dump);

// Decodes and validates the samply SAMPLY_JIT_CODE_DEBUG_INFO2 record of `total` bytes at
// `offset` into `record`, adding what is wrong to dump.problems.
void DecodeInlineRecord(const RecordBytes& bytes, uint64_t offset, uint64_t total, Record& record, JitDump& dump);

}  // namespace jitdump
