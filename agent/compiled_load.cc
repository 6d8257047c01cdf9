#include "agent/compiled_load.h"

#include <jvmticmlr.h>

#include <span>
#include <vector>

#include "agent/inline_tree.h"
#include "agent/line_map.h"
#include "agent/load_builder.h"

namespace jitdump_agent {
namespace {

struct PcFrames {
  uint64_t pc;
  size_t first;  // index into the flat frame list
  size_t count;
};

// Per-thread working memory, reused so a callback allocates little beyond its batch (the
// capacity follows the largest method this thread has seen).
struct LoadScratch {
  std::vector<Frame> frames;
  std::vector<PcFrames> pcs;
  std::vector<PcSite> sites;
  std::vector<LineRow> rows;
  InlineTreeBuilder inline_builder;  // its record is encoded before the next build on this thread
  void Clear() {
    frames.clear();
    pcs.clear();
    sites.clear();
    rows.clear();
  }
};
thread_local LoadScratch t_scratch;

}  // namespace

Batch* BuildCompiledLoad(const CompiledLoadContext& c, const CompiledLoadEvent& e) {
  const uint64_t start = reinterpret_cast<uintptr_t>(e.code_addr);
  const uint64_t size = e.code_size > 0 ? static_cast<uint64_t>(e.code_size) : 0;

  auto lock = c.cache.Lock();
  c.cache.BeginCallback();
  const MethodInfo* root = c.cache.Get(e.method);

  // Scope chains of every PcDesc, innermost first, from HotSpot's inline record.
  LoadScratch& scratch = t_scratch;
  scratch.Clear();
  const bool want_scopes = c.lines || c.options.inline_info;
  for (auto* header = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(e.compile_info);
       want_scopes && header != nullptr; header = header->next) {
    if (header->kind != JVMTI_CMLR_INLINE_INFO) continue;
    const auto* record = reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(header);
    if (record->pcinfo == nullptr || record->numpcs <= 0) continue;
    scratch.pcs.reserve(scratch.pcs.size() + static_cast<size_t>(record->numpcs));
    for (jint i = 0; i < record->numpcs; ++i) {
      const PCStackInfo& info = record->pcinfo[i];
      if (info.methods == nullptr || info.bcis == nullptr || info.numstackframes <= 0) continue;
      const size_t first = scratch.frames.size();
      for (jint j = 0; j < info.numstackframes; ++j) {
        scratch.frames.push_back({&c.cache.Get(info.methods[j])->source, info.bcis[j]});
      }
      scratch.pcs.push_back({reinterpret_cast<uintptr_t>(info.pc), first, static_cast<size_t>(info.numstackframes)});
    }
  }
  for (const PcFrames& p : scratch.pcs) {
    scratch.sites.push_back({p.pc, std::span<const Frame>(scratch.frames.data() + p.first, p.count)});
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
  input.code = c.options.code ? e.code_addr : nullptr;
  input.name = root->name;
  input.rows = scratch.rows;
  input.inline_info = inline_info;
  input.replayed = e.replayed;
  return BuildLoadBatch(c.queue, c.stats, input);
}

}  // namespace jitdump_agent
