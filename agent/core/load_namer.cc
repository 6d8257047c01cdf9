// Names and lines of one compiled method from the method cache (load_namer.h).
#include "agent/core/load_namer.h"

namespace jitdump_agent {

LoadNames LoadNamer::Name(MethodCache& cache, const CompiledMethod& load) {
  const MethodInfo* root = cache.Get(load.method);
  frames_.clear();
  sites_.clear();
  entries_.clear();
  if (wants_scopes()) {
    frames_.reserve(load.frames.size());
    // A load's ~150 frames name a handful of methods: a small direct-mapped memo in front of
    // the cache answers most frames with one compare (jmethodIDs are 8-byte slots, so their
    // low bits above 3 spread well).
    struct Memo {
      MethodId method = 0;
      const MethodLines* source = nullptr;
    };
    Memo memo[16];
    for (const ScopeFrame& frame : load.frames) {
      Memo& slot = memo[(frame.method >> 3) & 15];
      if (slot.source == nullptr || slot.method != frame.method) {
        slot = {frame.method, &cache.Get(frame.method)->source};
      }
      frames_.push_back({slot.source, frame.bci});
    }
    for (const ScopePc& pc : load.pcs) {
      if (static_cast<size_t>(pc.first) + pc.count > frames_.size()) continue;  // never from the callbacks
      sites_.push_back({pc.pc, std::span<const Frame>(frames_.data() + pc.first, pc.count)});
    }
  }
  const uint64_t start = load.code_addr;
  if (lines_) {
    BuildLineRows(start, start + load.code_size, sites_, /*closing_row=*/true, rows_);
    for (const LineRow& row : rows_) entries_.push_back({row.addr, row.line, 0, *row.file});
  }
  LoadNames names;
  names.name = root->name;
  names.perf_map_name = root->perf_map_name();
  if (!root->resolved) {
    stats_.unnamed_loads.Add();
    if (root->refused_dying) stats_.unnamed_after_vm_death.Add();
  } else if (root->mh_intrinsic) {
    // The method's own name is some other intrinsic's (intrinsic_names.h): a placeholder, for
    // the writer to replace from the JVM's code list (intrinsic_stage.h).
    names.name = unknown_intrinsic_.name;
    names.perf_map_name = unknown_intrinsic_.perf_map_name();
    names.intrinsic_placeholder = true;
  }
  names.lines = entries_;
  if (inline_info_ && !sites_.empty()) {
    // The timestamp is the writer's to set (it may move it back).
    names.inline_info = inline_builder_.Build(0, start, load.code_size, root->source, sites_);
  }
  return names;
}

}  // namespace jitdump_agent
