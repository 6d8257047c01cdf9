// Byte swapping of every on-disk struct of dump_format.h, field by field (byte_order.h).
#include "jitdump/read/byte_order.h"

namespace jitdump {

void SwapBytes(FileHeader& header) {
  SwapBytes(header.magic);
  SwapBytes(header.version);
  SwapBytes(header.total_size);
  SwapBytes(header.elf_mach);
  SwapBytes(header.pad1);
  SwapBytes(header.pid);
  SwapBytes(header.timestamp);
  SwapBytes(header.flags);
}

void SwapBytes(RecordHeader& header) {
  SwapBytes(header.id);
  SwapBytes(header.total_size);
  SwapBytes(header.timestamp);
}

void SwapBytes(CodeLoadFixed& load) {
  SwapBytes(load.header);
  SwapBytes(load.pid);
  SwapBytes(load.tid);
  SwapBytes(load.vma);
  SwapBytes(load.code_addr);
  SwapBytes(load.code_size);
  SwapBytes(load.code_index);
}

void SwapBytes(CodeMoveRecord& move) {
  SwapBytes(move.header);
  SwapBytes(move.pid);
  SwapBytes(move.tid);
  SwapBytes(move.vma);
  SwapBytes(move.old_code_addr);
  SwapBytes(move.new_code_addr);
  SwapBytes(move.code_size);
  SwapBytes(move.code_index);
}

void SwapBytes(DebugInfoFixed& info) {
  SwapBytes(info.header);
  SwapBytes(info.code_addr);
  SwapBytes(info.nr_entry);
}

void SwapBytes(DebugEntryFixed& entry) {
  SwapBytes(entry.addr);
  SwapBytes(entry.lineno);
  SwapBytes(entry.discrim);
}

void SwapBytes(UnwindingInfoFixed& info) {
  SwapBytes(info.header);
  SwapBytes(info.unwind_data_size);
  SwapBytes(info.eh_frame_hdr_size);
  SwapBytes(info.mapped_size);
}

void SwapBytes(SamplyDebugInfo2Fixed& info) {
  SwapBytes(info.header);
  SwapBytes(info.file_count);
  SwapBytes(info.file_list_size);
  SwapBytes(info.function_names_count);
  SwapBytes(info.function_names_list_size);
  SwapBytes(info.function_count);
  SwapBytes(info.inline_call_record_count);
  SwapBytes(info.range_count);
  SwapBytes(info.line_record_count);
}

void SwapBytes(SamplyFunctionRecord& function) {
  SwapBytes(function.function_name_index);
  SwapBytes(function.file_index);
  SwapBytes(function.start_line);
  SwapBytes(function.start_column);
  SwapBytes(function.flags);
}

void SwapBytes(SamplyInlineCallRecord& call) {
  SwapBytes(call.depth);
  SwapBytes(call.range_count);
  SwapBytes(call.function_index);
  SwapBytes(call.call_line_number);
  SwapBytes(call.call_column_number);
}

void SwapBytes(SamplyRangeRecord& range) {
  SwapBytes(range.start_offset);
  SwapBytes(range.size);
}

void SwapBytes(SamplyLineRecord& line) {
  SwapBytes(line.code_offset);
  SwapBytes(line.file_index);
  SwapBytes(line.line_number);
  SwapBytes(line.column_number);
}

}  // namespace jitdump
