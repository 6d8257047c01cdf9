// JVMTI glue: reading compile_info's inline records (compile_info.h).
#include "agent/compile_info.h"

#include <jvmti.h>
#include <jvmticmlr.h>

#include "agent/jvm_ids.h"

namespace jitdump_agent {

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
      for (jint j = 0; j < info.numstackframes; ++j) frames.push_back({IdOf(info.methods[j]), info.bcis[j]});
      pcs.push_back({reinterpret_cast<uintptr_t>(info.pc), static_cast<uint32_t>(first),
                     static_cast<uint32_t>(info.numstackframes)});
    }
  }
}

}  // namespace jitdump_agent
