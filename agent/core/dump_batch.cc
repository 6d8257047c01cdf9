// Encoding loads into one write (dump_batch.h).
#include "agent/core/dump_batch.h"

#include <cstring>

namespace jitdump_agent {

DumpBatch::DumpBatch() {
  // Sized for a full batch up front, so adding a load allocates only when its records outgrow
  // the buffer, and writing a batch never allocates.
  pieces_.reserve(kMaxLoads);
  iov_.reserve(2 * kMaxLoads);
}

bool DumpBatch::Add(const CodeEvent& load, const LoadNames& names, uint32_t pid, uint64_t timestamp,
                    uint64_t code_index) {
  jitdump::CodeLoad record;
  record.timestamp = timestamp;
  record.pid = pid;
  record.tid = load.tid;
  record.vma = load.code_addr;
  record.code_addr = load.code_addr;
  record.code_size = load.code_size;
  record.code_index = code_index;
  record.name = names.name;
  jitdump::InlineDebugInfo inline_info;
  if (names.inline_info != nullptr) {
    inline_info = *names.inline_info;
    inline_info.timestamp = timestamp;
  }

  const bool has_lines = !names.lines.empty();
  const bool has_inline = names.inline_info != nullptr;
  const size_t debug_size = has_lines ? jitdump::DebugInfoSize(names.lines) : 0;
  const size_t inline_size = has_inline ? jitdump::InlineDebugInfoSize(inline_info) : 0;
  const size_t head_size = jitdump::CodeLoadHeadSize(record);
  if (head_size == 0 || (has_lines && debug_size == 0) || (has_inline && inline_size == 0)) return false;
  // code=off: the zeros the record must carry go into the buffer.
  const size_t zeros = load.code == nullptr ? static_cast<size_t>(load.code_size) : 0;

  const size_t offset = buffer_.size();
  const size_t size = debug_size + inline_size + head_size + zeros;
  buffer_.resize(offset + size);
  uint8_t* out = buffer_.data() + offset;
  if (has_lines) out = jitdump::EncodeDebugInfo(timestamp, load.code_addr, names.lines, out);
  if (has_inline) out = jitdump::EncodeInlineDebugInfo(inline_info, out);
  out = jitdump::EncodeCodeLoadHead(record, out);
  if (zeros != 0) std::memset(out, 0, zeros);
  pieces_.push_back({offset, size, load.code, load.code != nullptr ? load.code_size : 0});

  ++totals_.loads;
  totals_.debug_infos += has_lines;
  totals_.debug_entries += names.lines.size();
  totals_.inline_infos += has_inline;
  totals_.code_bytes += load.code_size;
  totals_.bytes += size + (load.code != nullptr ? load.code_size : 0);
  return true;
}

std::span<const struct iovec> DumpBatch::Iovecs() {
  iov_.clear();
  for (const Piece& piece : pieces_) {
    iov_.push_back({buffer_.data() + piece.offset, piece.size});
    if (piece.code_size != 0) iov_.push_back({const_cast<uint8_t*>(piece.code), piece.code_size});
  }
  return iov_;
}

void DumpBatch::Rollback(const Mark& mark) {
  buffer_.resize(mark.buffer);
  pieces_.resize(mark.pieces);
  totals_ = mark.totals;
}

void DumpBatch::Release() {
  std::vector<uint8_t>().swap(buffer_);
  std::vector<Piece>().swap(pieces_);
  std::vector<struct iovec>().swap(iov_);
  totals_ = Totals();
}

void DumpBatch::Clear() {
  buffer_.clear();
  pieces_.clear();
  totals_ = Totals();
}

}  // namespace jitdump_agent
