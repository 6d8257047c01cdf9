#include "agent/compiled_load.h"

#include <jvmticmlr.h>

#include "agent/inline_tree.h"
#include "agent/line_map.h"
#include "agent/load_builder.h"

namespace jitdump_agent {
namespace {

// Per-thread working memory, reused so a load allocates little beyond its batch (the capacity
// follows the largest method this thread has seen).
struct LoadScratch {
  std::vector<Frame> frames;
  std::vector<PcSite> sites;
  std::vector<LineRow> rows;
  InlineTreeBuilder inline_builder;  // its record is encoded before the next build on this thread
  void Clear() {
    frames.clear();
    sites.clear();
    rows.clear();
  }
};
thread_local LoadScratch t_scratch;

}  // namespace

void CollectScopes(const void* compile_info, std::vector<ScopePc>& pcs, std::vector<ScopeFrame>& frames) {
  for (auto* header = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(compile_info); header != nullptr;
       header = header->next) {
    if (header->kind != JVMTI_CMLR_INLINE_INFO) continue;
    const auto* record = reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(header);
    if (record->pcinfo == nullptr || record->numpcs <= 0) continue;
    pcs.reserve(pcs.size() + static_cast<size_t>(record->numpcs));
    for (jint i = 0; i < record->numpcs; ++i) {
      const PCStackInfo& info = record->pcinfo[i];
      if (info.methods == nullptr || info.bcis == nullptr || info.numstackframes <= 0) continue;
      const size_t first = frames.size();
      for (jint j = 0; j < info.numstackframes; ++j) frames.push_back({info.methods[j], info.bcis[j]});
      pcs.push_back({reinterpret_cast<uintptr_t>(info.pc), static_cast<uint32_t>(first),
                     static_cast<uint32_t>(info.numstackframes)});
    }
  }
}

Batch* BuildCompiledLoad(const CompiledLoadContext& c, const CompiledLoadEvent& e, Batch* replaces) {
  const uint64_t start = e.code_addr;
  const uint64_t size = e.code_size;

  auto lock = c.cache.Lock();
  c.cache.BeginCallback();
  const MethodInfo* root = c.cache.Get(e.method);

  LoadScratch& scratch = t_scratch;
  scratch.Clear();
  if (WantsScopes(c)) {
    scratch.frames.reserve(e.frames.size());
    for (const ScopeFrame& frame : e.frames) scratch.frames.push_back({&c.cache.Get(frame.method)->source, frame.bci});
    for (const ScopePc& pc : e.pcs) {
      if (static_cast<size_t>(pc.first) + pc.count > scratch.frames.size()) continue;  // never from CollectScopes
      scratch.sites.push_back({pc.pc, std::span<const Frame>(scratch.frames.data() + pc.first, pc.count)});
    }
  }

  if (c.lines) BuildLineRows(start, start + size, scratch.sites, /*closing_row=*/true, scratch.rows);

  const jitdump::InlineDebugInfo* inline_info = nullptr;
  if (c.options.inline_info && !scratch.sites.empty()) {
    inline_info = scratch.inline_builder.Build(e.timestamp, start, size, root->source, scratch.sites);
  }

  LoadInput input;
  input.timestamp = e.timestamp;
  input.pid = c.pid;
  input.tid = e.tid;
  input.code_addr = start;
  input.code_size = size;
  input.code = e.code;
  input.name = root->name;
  input.rows = scratch.rows;
  input.inline_info = inline_info;
  input.replayed = e.replayed;
  input.replaces = replaces;
  return BuildLoadBatch(c.queue, c.stats, input);
}

}  // namespace jitdump_agent
