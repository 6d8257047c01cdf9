// Reading the structs of dump_format.h out of a dump in either byte order. A producer writes every
// multi-byte field in its own byte order (the magic tells which); a reader copies the struct out
// of the file and, when the file is cross-endian, swaps each of its fields in place.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "jitdump/format/dump_format.h"

namespace jitdump {

inline void SwapBytes(uint32_t& value) { value = __builtin_bswap32(value); }
inline void SwapBytes(int32_t& value) {
  value = static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(value)));
}
inline void SwapBytes(uint64_t& value) { value = __builtin_bswap64(value); }

// Every field of each on-disk struct, swapped.
void SwapBytes(FileHeader& header);
void SwapBytes(RecordHeader& header);
void SwapBytes(CodeLoadFixed& load);
void SwapBytes(CodeMoveRecord& move);
void SwapBytes(DebugInfoFixed& info);
void SwapBytes(DebugEntryFixed& entry);
void SwapBytes(UnwindingInfoFixed& info);
void SwapBytes(SamplyDebugInfo2Fixed& info);
void SwapBytes(SamplyFunctionRecord& function);
void SwapBytes(SamplyInlineCallRecord& call);
void SwapBytes(SamplyRangeRecord& range);
void SwapBytes(SamplyLineRecord& line);

// The T stored at `offset` in `data`, in host byte order. The caller has checked that
// sizeof(T) bytes lie there; the copy needs no alignment.
template <typename T>
T ReadStruct(std::span<const uint8_t> data, uint64_t offset, bool cross_endian) {
  T value;
  std::memcpy(&value, data.data() + offset, sizeof value);
  if (cross_endian) SwapBytes(value);
  return value;
}

}  // namespace jitdump
