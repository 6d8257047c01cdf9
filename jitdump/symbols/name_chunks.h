// A symbol table's names, NUL-terminated, each found by a 32-bit offset, kept in 256 KiB chunks
// that never move. One string holding them all grew by doubling (libjvm.so's 2.7 MB of names:
// blocks of 1, 2 and 4 MB, then a copy to fit), and each of those large blocks was memory the
// heap had never used: on this project's VMs new memory is the dearest thing a report touches
// (docs/measurements.md). Chunks of 256 KiB fill the free stretches the read of the recording
// left behind instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace jitdump::symbols {

class NameChunks {
 public:
  NameChunks() = default;
  NameChunks(NameChunks&& other) noexcept { *this = std::move(other); }
  // The chunks move with their names (their addresses stay); `other` is left empty.
  NameChunks& operator=(NameChunks&& other) noexcept {
    chunks_ = std::move(other.chunks_);
    units_ = std::move(other.units_);
    last_ = std::exchange(other.last_, nullptr);
    units_in_last_ = std::exchange(other.units_in_last_, 0);
    room_ = std::exchange(other.room_, 0);
    used_ = std::exchange(other.used_, 0);
    other.chunks_.clear();
    other.units_.clear();
    return *this;
  }

  // Stores `name` (which holds no NUL) and its NUL; its offset.
  uint32_t Add(std::string_view name) {
    const size_t need = name.size() + 1;
    if (units_.empty() || used_ + need > room_) NewChunk(need);
    const uint64_t offset = uint64_t{units_.size() - units_in_last_} * kChunkBytes + used_;
    char* at = last_ + used_;
    if (!name.empty()) std::memcpy(at, name.data(), name.size());
    at[name.size()] = '\0';
    used_ += need;
    return static_cast<uint32_t>(offset);
  }

  // The name at `offset`, which an Add returned.
  const char* At(uint32_t offset) const {
    const size_t unit = offset / kChunkBytes;
    return unit < units_.size() ? units_[unit] + offset % kChunkBytes : nullptr;
  }

  // Whether a name of `bytes` (without its NUL) may still be added: its offset and the chunk it
  // may start must stay inside 32 bits (4 GiB of names: a hostile file's; kMaxSymbolTableBytes
  // stops a real one long before).
  bool Fits(size_t bytes) const {
    return bytes < UINT32_MAX && uint64_t{units_.size()} * kChunkBytes + bytes + 1 + kChunkBytes <= UINT32_MAX;
  }

 private:
  static constexpr size_t kChunkBytes = size_t{256} << 10;

  // A chunk for at least `need` bytes: one unit of offsets, or several for a longer name (each
  // unit pointing into it, so an offset still finds its chunk by division).
  void NewChunk(size_t need) {
    const size_t units = need <= kChunkBytes ? 1 : (need + kChunkBytes - 1) / kChunkBytes;
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(units * kChunkBytes));
    last_ = chunks_.back().get();
    for (size_t u = 0; u < units; ++u) units_.push_back(last_ + u * kChunkBytes);
    units_in_last_ = units;
    room_ = units * kChunkBytes;
    used_ = 0;
  }

  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<const char*> units_;  // the start of each kChunkBytes of offsets
  char* last_ = nullptr;            // the chunk names are added to
  size_t units_in_last_ = 0;
  size_t room_ = 0;                 // its size
  size_t used_ = 0;                 // its bytes taken
};

}  // namespace jitdump::symbols
