// The decoded dump (dump.h): record type names and the error summary.
#include "jitdump/read/dump.h"

#include <algorithm>

namespace jitdump {

const char* RecordTypeName(uint32_t id) {
  switch (static_cast<RecordType>(id)) {
    case RecordType::kCodeLoad: return "CODE_LOAD";
    case RecordType::kCodeMove: return "CODE_MOVE";
    case RecordType::kCodeDebugInfo: return "DEBUG_INFO";
    case RecordType::kCodeClose: return "CODE_CLOSE";
    case RecordType::kCodeUnwindingInfo: return "UNWINDING_INFO";
    case RecordType::kSamplyDebugInfo2: return "SAMPLY_DEBUG_INFO2";
  }
  return "UNKNOWN";
}

bool JitDump::HasErrors() const {
  return std::any_of(problems.begin(), problems.end(),
                     [](const Problem& p) { return p.severity == Severity::kError; });
}

}  // namespace jitdump
