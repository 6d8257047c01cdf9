// JVMTI glue: reading compile_info's inline records (compile_info.h).
#include "agent/jvmti/compile_info.h"

#include <jvmti.h>
#include <jvmticmlr.h>

#include "agent/jvmti/jvm_ids.h"

namespace jitdump_agent {

namespace {

// Calls visit(info) for each PcDesc of compile_info's inline records that has frames.
template <typename Visit>
void ForEachScope(const void* compile_info, const Visit& visit) {
  for (auto* header = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(compile_info); header != nullptr;
       header = header->next) {
    if (header->kind != JVMTI_CMLR_INLINE_INFO) continue;
    const auto* record = reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(header);
    if (record->pcinfo == nullptr || record->numpcs <= 0) continue;
    for (jint i = 0; i < record->numpcs; ++i) {
      const PCStackInfo& info = record->pcinfo[i];
      if (info.methods == nullptr || info.bcis == nullptr || info.numstackframes <= 0) continue;
      visit(info);
    }
  }
}

}  // namespace

void CollectScopes(const void* compile_info, std::vector<ScopePc>& pcs, std::vector<ScopeFrame>& frames) {
  const ScopeCounts counts = CountScopes(compile_info);
  const size_t first_pc = pcs.size();
  const size_t first_frame = frames.size();
  pcs.resize(first_pc + counts.pcs);
  frames.resize(first_frame + counts.frames);
  FillScopes(compile_info, std::span<ScopePc>(pcs).subspan(first_pc),
             std::span<ScopeFrame>(frames).subspan(first_frame));
  // Chains index the whole frame list.
  for (size_t i = first_pc; i < pcs.size(); ++i) pcs[i].first += static_cast<uint32_t>(first_frame);
}

ScopeCounts CountScopes(const void* compile_info) {
  ScopeCounts counts;
  ForEachScope(compile_info, [&](const PCStackInfo& info) {
    ++counts.pcs;
    counts.frames += static_cast<size_t>(info.numstackframes);
  });
  return counts;
}

void FillScopes(const void* compile_info, std::span<ScopePc> pcs, std::span<ScopeFrame> frames) {
  size_t pc = 0;
  size_t frame = 0;
  ForEachScope(compile_info, [&](const PCStackInfo& info) {
    const size_t count = static_cast<size_t>(info.numstackframes);
    if (pc >= pcs.size() || count > frames.size() - frame) return;  // sized by CountScopes: never
    pcs[pc++] = {reinterpret_cast<uintptr_t>(info.pc), static_cast<uint32_t>(frame), static_cast<uint32_t>(count)};
    for (size_t j = 0; j < count; ++j) frames[frame++] = {IdOf(info.methods[j]), info.bcis[j]};
  });
}

}  // namespace jitdump_agent
