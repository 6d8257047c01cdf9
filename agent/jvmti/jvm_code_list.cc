// JVMTI glue: Compiler.codelist through JMM (jvm_code_list.h).
#include "agent/jvmti/jvm_code_list.h"

#include <dlfcn.h>

#include "agent/core/log.h"

namespace jitdump_agent {
namespace {

// jmm.h is not in a JDK's include directory, so its JmmInterface is addressed as slots, per
// version. HotSpot hands the table out only for the exact version it implements
// (JVM_GetManagement returns null for any other), so a layout is never used on a JVM with
// another one: slot 2 is GetVersion in every version (checked as well); ExecuteDiagnosticCommand
// is slot 38 in JMM_VERSION_3 (JDK 14-20) and 39 in JMM_VERSION_4 (JDK 21-25, which inserted
// GetTotalThreadAllocatedMemory before it). Measured: 17.0.21 grants 3, Temurin 25.0.3 grants 4.
struct JmmLayout {
  jint version;
  int execute_slot;
};
constexpr JmmLayout kLayouts[] = {{0x20040000, 39}, {0x20030000, 38}};
constexpr int kGetVersionSlot = 2;

using GetManagement = void* (*)(jint);
using GetVersion = jint(JNICALL*)(JNIEnv*);

}  // namespace

JmmCodeList::Execute JmmCodeList::Lookup() {
  auto get = reinterpret_cast<GetManagement>(::dlsym(RTLD_DEFAULT, "JVM_GetManagement"));
  if (get == nullptr) {
    Log(LogLevel::kInfo, "no JVM_GetManagement in this JVM: method-handle intrinsics stay unnamed");
    return nullptr;
  }
  for (const JmmLayout& layout : kLayouts) {
    void** slots = static_cast<void**>(get(layout.version));
    if (slots == nullptr) continue;
    auto version = reinterpret_cast<GetVersion>(slots[kGetVersionSlot]);
    if (version == nullptr || version(env_) != layout.version) break;
    return reinterpret_cast<Execute>(slots[layout.execute_slot]);
  }
  Log(LogLevel::kInfo, "this JVM's management interface has a version the agent does not know: "
      "method-handle intrinsics stay unnamed");
  return nullptr;
}

bool JmmCodeList::Read(std::string* text) {
  if (env_ == nullptr) return false;
  if (!looked_up_) {
    looked_up_ = true;
    execute_ = Lookup();
  }
  if (execute_ == nullptr) return false;
  jstring command = env_->NewStringUTF("Compiler.codelist");
  if (command == nullptr) {
    env_->ExceptionClear();
    return false;
  }
  jstring output = execute_(env_, command);
  env_->DeleteLocalRef(command);
  if (env_->ExceptionCheck() || output == nullptr) {
    env_->ExceptionClear();
    if (output != nullptr) env_->DeleteLocalRef(output);
    Log(LogLevel::kInfo, "Compiler.codelist failed: method-handle intrinsics stay unnamed");
    return false;
  }
  bool ok = false;
  if (const char* chars = env_->GetStringUTFChars(output, nullptr)) {
    try {
      text->assign(chars);
      ok = true;
    } catch (...) {
    }
    env_->ReleaseStringUTFChars(output, chars);
  } else {
    env_->ExceptionClear();
  }
  env_->DeleteLocalRef(output);
  return ok;
}

}  // namespace jitdump_agent
