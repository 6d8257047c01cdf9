// The records of several code loads for one write. Each load's DEBUG_INFO, inline record and
// CODE_LOAD (in the order perf needs) are encoded once, with the timestamp and code_index the
// writer settled, into one buffer; the code bytes are written straight from the load's event
// (pwritev), never copied again. Writer thread only.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <vector>

#include "agent/core/code_event.h"

namespace jitdump_agent {

class DumpBatch {
 public:
  // A write per 64 loads (~100 KiB of records plus their code) keeps the encoding buffer, which
  // stays at its largest size, small; writes are few either way (the writer wakes for 256 KiB).
  static constexpr size_t kMaxLoads = 64;
  static constexpr size_t kMaxBufferBytes = 1 << 20;  // encoded bytes (code excluded)

  // What the batch holds, for the stats once it is written.
  struct Totals {
    uint64_t loads = 0;
    uint64_t debug_infos = 0;
    uint64_t debug_entries = 0;
    uint64_t inline_infos = 0;
    uint64_t code_bytes = 0;
    uint64_t bytes = 0;  // everything the write appends
  };

  DumpBatch();

  // Encodes the records of `load` (whose event must outlive the write). false, adding nothing,
  // when a record would exceed the format's 4 GiB limit. When it throws (no memory) nothing
  // was added either.
  bool Add(const CodeEvent& load, const LoadNames& names, uint32_t pid, uint64_t timestamp, uint64_t code_index);
  bool full() const { return totals_.loads >= kMaxLoads || buffer_.size() >= kMaxBufferBytes; }
  bool empty() const { return totals_.loads == 0; }
  const Totals& totals() const { return totals_; }
  // What the batch holds now, to take back the loads added after it (a load past max_size=).
  struct Mark {
    size_t buffer = 0;
    size_t pieces = 0;
    Totals totals;
  };
  Mark mark() const { return {buffer_.size(), pieces_.size(), totals_}; }
  void Rollback(const Mark& mark);
  // Everything added, in order, as one write appends it.
  std::span<const struct iovec> Iovecs();
  void Clear();
  // Clear, and gives the buffers' memory back (the session is over).
  void Release();

 private:
  // Encoded bytes [offset, offset + size) of the buffer, then `code_size` bytes at `code`.
  struct Piece {
    size_t offset;
    size_t size;
    const uint8_t* code;
    uint64_t code_size;
  };
  std::vector<uint8_t> buffer_;
  std::vector<Piece> pieces_;
  std::vector<struct iovec> iov_;
  Totals totals_;
};

}  // namespace jitdump_agent
