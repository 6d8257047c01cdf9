// The decoder's byte swapping: every field of every on-disk struct is swapped, as a whole field
// (a u64 is not swapped as two u32s), and nothing else is touched.
#include "jitdump/read/byte_order.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace jitdump {
namespace {

uint32_t Swapped(uint32_t v) { return __builtin_bswap32(v); }
int32_t Swapped(int32_t v) { return static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(v))); }
uint64_t Swapped(uint64_t v) { return __builtin_bswap64(v); }

// A T whose bytes are 1, 2, 3, ...: every byte differs, so a byte left in place is visible.
template <typename T>
T Distinct() {
  std::vector<uint8_t> bytes(sizeof(T));
  std::iota(bytes.begin(), bytes.end(), uint8_t{1});
  T value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

// Swaps a Distinct<T>() and checks the whole struct: no byte stayed where it was (no field was
// forgotten), each listed field is its own byte reversal, and swapping back restores it.
template <typename T, typename... Fields>
void ExpectSwapsEveryField(Fields... fields) {
  const T original = Distinct<T>();
  T swapped = original;
  SwapBytes(swapped);
  const auto* a = reinterpret_cast<const uint8_t*>(&original);
  const auto* b = reinterpret_cast<const uint8_t*>(&swapped);
  for (size_t i = 0; i < sizeof(T); ++i) EXPECT_NE(a[i], b[i]) << "byte " << i << " was not swapped";
  ([&] { EXPECT_EQ(swapped.*fields, Swapped(original.*fields)); }(), ...);
  T back = swapped;
  SwapBytes(back);
  EXPECT_EQ(std::memcmp(&back, &original, sizeof(T)), 0);
}

TEST(ByteOrder, HeadersSwapEveryField) {
  ExpectSwapsEveryField<FileHeader>(&FileHeader::magic, &FileHeader::version, &FileHeader::total_size,
                                    &FileHeader::elf_mach, &FileHeader::pad1, &FileHeader::pid,
                                    &FileHeader::timestamp, &FileHeader::flags);
  ExpectSwapsEveryField<RecordHeader>(&RecordHeader::id, &RecordHeader::total_size, &RecordHeader::timestamp);
}

TEST(ByteOrder, RecordBodiesSwapEveryField) {
  ExpectSwapsEveryField<CodeLoadFixed>(&CodeLoadFixed::pid, &CodeLoadFixed::tid, &CodeLoadFixed::vma,
                                       &CodeLoadFixed::code_addr, &CodeLoadFixed::code_size,
                                       &CodeLoadFixed::code_index);
  ExpectSwapsEveryField<CodeMoveRecord>(&CodeMoveRecord::pid, &CodeMoveRecord::tid, &CodeMoveRecord::vma,
                                        &CodeMoveRecord::old_code_addr, &CodeMoveRecord::new_code_addr,
                                        &CodeMoveRecord::code_size, &CodeMoveRecord::code_index);
  ExpectSwapsEveryField<DebugInfoFixed>(&DebugInfoFixed::code_addr, &DebugInfoFixed::nr_entry);
  ExpectSwapsEveryField<DebugEntryFixed>(&DebugEntryFixed::addr, &DebugEntryFixed::lineno, &DebugEntryFixed::discrim);
  ExpectSwapsEveryField<UnwindingInfoFixed>(&UnwindingInfoFixed::unwind_data_size,
                                            &UnwindingInfoFixed::eh_frame_hdr_size, &UnwindingInfoFixed::mapped_size);
}

TEST(ByteOrder, SamplyListsSwapEveryField) {
  ExpectSwapsEveryField<SamplyDebugInfo2Fixed>(
      &SamplyDebugInfo2Fixed::file_count, &SamplyDebugInfo2Fixed::file_list_size,
      &SamplyDebugInfo2Fixed::function_names_count, &SamplyDebugInfo2Fixed::function_names_list_size,
      &SamplyDebugInfo2Fixed::function_count, &SamplyDebugInfo2Fixed::inline_call_record_count,
      &SamplyDebugInfo2Fixed::range_count, &SamplyDebugInfo2Fixed::line_record_count);
  ExpectSwapsEveryField<SamplyFunctionRecord>(&SamplyFunctionRecord::function_name_index,
                                              &SamplyFunctionRecord::file_index, &SamplyFunctionRecord::start_line,
                                              &SamplyFunctionRecord::start_column, &SamplyFunctionRecord::flags);
  ExpectSwapsEveryField<SamplyInlineCallRecord>(
      &SamplyInlineCallRecord::depth, &SamplyInlineCallRecord::range_count, &SamplyInlineCallRecord::function_index,
      &SamplyInlineCallRecord::call_line_number, &SamplyInlineCallRecord::call_column_number);
  ExpectSwapsEveryField<SamplyRangeRecord>(&SamplyRangeRecord::start_offset, &SamplyRangeRecord::size);
  ExpectSwapsEveryField<SamplyLineRecord>(&SamplyLineRecord::code_offset, &SamplyLineRecord::file_index,
                                          &SamplyLineRecord::line_number, &SamplyLineRecord::column_number);
}

TEST(ByteOrder, ReadStructCopiesFromAnyOffsetAndSwapsOnlyCrossEndian) {
  // A big-endian record header at an odd offset: id 1, total_size 0x40, timestamp 0x0102030405060708.
  const std::vector<uint8_t> bytes = {0xEE, 0, 0, 0, 1, 0, 0, 0, 0x40, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto swapped = ReadStruct<RecordHeader>(bytes, 1, true);
  EXPECT_EQ(swapped.id, 1u);
  EXPECT_EQ(swapped.total_size, 0x40u);
  EXPECT_EQ(swapped.timestamp, 0x0102030405060708u);
  const auto native = ReadStruct<RecordHeader>(bytes, 1, false);
  EXPECT_EQ(native.id, 0x01000000u);
  EXPECT_EQ(native.timestamp, 0x0807060504030201u);
}

}  // namespace
}  // namespace jitdump
