// Names and lines for one compiled method: looks the method and every method of its PcDesc
// scope chains up in a MethodCache, builds the DEBUG_INFO rows (line_map.h) and, with inline=on,
// samply's inline record (inline_tree.h). The same code serves the callback that resolves a
// load itself and the writer resolving a deferred one, so both hand the encoder the same data.
// Plain C++: the cache's MethodLookup does the JVM's part.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "agent/core/code_event.h"
#include "agent/core/inline_tree.h"
#include "agent/core/intrinsic_names.h"
#include "agent/core/line_map.h"
#include "agent/core/method_cache.h"

namespace jitdump_agent {

// The compiled method whose names and lines are wanted: views, as the callback or the event has them.
struct CompiledMethod {
  MethodId method = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  uint64_t timestamp = 0;  // when the JVM posted the load (the callback's clock)
  std::span<const ScopePc> pcs;
  std::span<const ScopeFrame> frames;
};

class LoadNamer {
 public:
  // `lines`: DEBUG_INFO rows (lines=on and the JVM granted the line capabilities);
  // `inline_info`: samply's inline record (inline=on).
  // `style`: how the placeholder name of a method-handle intrinsic is spelled; counts in `stats`.
  LoadNamer(bool lines, bool inline_info, NameStyle style, Stats& stats)
      : lines_(lines), inline_info_(inline_info), unknown_intrinsic_(UnknownIntrinsicName(style)), stats_(stats) {}
  LoadNamer(const LoadNamer&) = delete;
  LoadNamer& operator=(const LoadNamer&) = delete;

  // Whether a load's scope chains are needed at all: callbacks copy them only then.
  bool wants_scopes() const { return lines_ || inline_info_; }

  // With the cache locked and its callback begun (MethodCache::BeginCallback). The views stay
  // valid until the next Name or until the cache changes.
  LoadNames Name(MethodCache& cache, const CompiledMethod& load);

 private:
  const bool lines_;
  const bool inline_info_;
  const IntrinsicName unknown_intrinsic_;
  Stats& stats_;
  // Working memory reused from load to load (the capacity follows the largest method seen).
  std::vector<Frame> frames_;
  std::vector<PcSite> sites_;
  std::vector<LineRow> rows_;
  std::vector<jitdump::DebugEntry> entries_;
  InlineTreeBuilder inline_builder_;
};

}  // namespace jitdump_agent
