// Deciding whether interpreted frames can be described on this JVM (interpreter_layout.h).
#include "agent/core/interpreter_layout.h"

namespace jitdump_agent {

LayoutDecision DecideInterpreterLayout(const VmStructs* structs, const std::optional<JvmVersion>& version,
                                       bool x86_64) {
  LayoutDecision decision;
  if (!x86_64) {
    decision.why_not = "only the x86-64 interpreter's frames are known";
    return decision;
  }
  if (!version) {
    decision.why_not = "the JVM's version (java.vm.version) could not be read";
    return decision;
  }
  if (version->feature < kFirstKnownFeature || version->feature > kLastKnownFeature) {
    decision.why_not = "JDK " + std::to_string(version->feature) + ": interpreted frames are known for JDK " +
                       std::to_string(kFirstKnownFeature) + " to " + std::to_string(kLastKnownFeature) +
                       " only (JDK 26 changed what a method id is)";
    return decision;
  }
  if (structs == nullptr) {
    decision.why_not = "this JVM exports no VMStructs (gHotSpotVMStructs): not HotSpot, or built without them";
    return decision;
  }
  InterpreterLayout layout;
  layout.jvm_feature = static_cast<uint32_t>(version->feature);
  std::string type;
  const std::optional<uint64_t> const_method = structs->FieldOffset("Method", "_constMethod", &type);
  if (!const_method || type != "ConstMethod*") {
    decision.why_not = "VMStructs has no Method::_constMethod of type ConstMethod*";
    return decision;
  }
  layout.method_const_method = *const_method;
  const std::optional<uint64_t> code_size = structs->FieldOffset("ConstMethod", "_code_size", &type);
  if (!code_size || type != "u2") {
    decision.why_not = "VMStructs has no ConstMethod::_code_size of type u2";
    return decision;
  }
  layout.const_method_code_size = *code_size;
  const std::optional<uint64_t> size = structs->TypeSize("ConstMethod");
  if (!size || *size < 16 || *size > 1024 || *code_size + 2 > *size) {
    decision.why_not = "VMStructs gives no plausible size of ConstMethod";
    return decision;
  }
  layout.const_method_size = *size;
  const std::optional<int32_t> sender_sp = structs->IntConstant("frame::interpreter_frame_sender_sp_offset");
  const std::optional<int32_t> last_sp = structs->IntConstant("frame::interpreter_frame_last_sp_offset");
  if (sender_sp != -1 || last_sp != -2) {
    decision.why_not = "the interpreter's frame is not laid out as known (frame::interpreter_frame_sender_sp_offset "
                       "and _last_sp_offset are not -1 and -2)";
    return decision;
  }
  decision.layout = layout;
  return decision;
}

}  // namespace jitdump_agent
