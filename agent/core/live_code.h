// What the dump says occupies each address of the code cache now: the writer's rule for
// duplicates (GenerateEvents replays racing with live events, stubs HotSpot lists again at VM
// death) and what the perf map keeps. Writer thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "agent/core/code_event.h"

namespace jitdump_agent {

class LiveCode {
 public:
  // Whether writing `load` (named `name`) would add nothing. A replayed stub is wanted only
  // where nothing already describes the code: the replay also lists enclosing containers
  // ("adapters", "C1 temporary CodeBuffer") and renames blobs, which would shadow the finer
  // names written before, and scratch buffers never hold running code. Anything else is a
  // duplicate when the very same code (address, size, name) is live already.
  bool IsDuplicate(const CodeEvent& load, std::string_view name) const;
  // Entries kept at most. Each is code at its own address range of the code cache, so HotSpot's
  // code cache bounds them already (javac keeps ~8,000; a 240 MB cache of the smallest methods
  // a few hundred thousand); this bound holds whatever the JVM does. Past it new code is not
  // tracked: it is still written, but its duplicates are not recognised and the perf map's
  // compaction leaves it out.
  static constexpr size_t kMaxEntries = 1 << 17;

  // The code now at [addr, addr + size); returns how many older entries it displaced.
  size_t Occupy(uint64_t addr, uint64_t size, std::string_view name, std::string_view perf_map_name);
  // The code at `addr` was unloaded: its size, or nullopt when nothing was live there.
  std::optional<uint64_t> Vacate(uint64_t addr);
  size_t size() const { return live_.size(); }
  // Calls visit(addr, size, perf_map_name) for every live entry, in address order.
  template <typename Visit>
  void ForEach(const Visit& visit) const {
    for (const auto& [addr, code] : live_) {
      visit(addr, code.size, code.perf_map_spelling.empty() ? std::string_view(code.name) : code.perf_map_spelling);
    }
  }

 private:
  bool Overlaps(uint64_t start, uint64_t size) const;

  struct Entry {
    uint64_t size;
    std::string name;
    std::string perf_map_spelling;  // empty: the name itself
  };
  std::map<uint64_t, Entry> live_;  // code_addr -> what is there now
};

}  // namespace jitdump_agent
