// The writer's view of the live code cache (live_code.h).
#include "agent/core/live_code.h"

namespace jitdump_agent {

bool LiveCode::IsDuplicate(const CodeEvent& load, std::string_view name) const {
  if (load.replayed && load.kind == EventKind::kStub) {
    return load.scratch_buffer || Overlaps(load.code_addr, load.code_size);
  }
  const auto it = live_.find(load.code_addr);
  return it != live_.end() && it->second.size == load.code_size && it->second.name == name;
}

bool LiveCode::Overlaps(uint64_t start, uint64_t size) const {
  auto it = live_.upper_bound(start);
  if (it != live_.begin()) {
    const auto prev = std::prev(it);
    if (prev->first + prev->second.size > start) return true;
  }
  return it != live_.end() && it->first < start + size;
}

size_t LiveCode::Occupy(uint64_t addr, uint64_t size, std::string_view name, std::string_view perf_map_name) {
  // Whatever overlapped this range is gone now.
  size_t displaced = 0;
  auto it = live_.lower_bound(addr);
  if (it != live_.begin()) {
    const auto prev = std::prev(it);
    if (prev->first + prev->second.size > addr) it = prev;
  }
  while (it != live_.end() && it->first < addr + size) {
    it = live_.erase(it);
    ++displaced;
  }
  if (live_.size() >= kMaxEntries) return displaced;
  live_[addr] = Entry{size, std::string(name), perf_map_name == name ? std::string() : std::string(perf_map_name)};
  return displaced;
}

std::optional<uint64_t> LiveCode::Vacate(uint64_t addr) {
  const auto it = live_.find(addr);
  if (it == live_.end()) return std::nullopt;
  const uint64_t size = it->second.size;
  live_.erase(it);
  return size;
}

}  // namespace jitdump_agent
