// JVMTI glue: class pins as JNI global references (class_pin.h).
#include "agent/jvmti/class_pin.h"

#include "agent/jvmti/jvm_ids.h"

namespace jitdump_agent {
namespace {

JNIEnv* CurrentEnv(JavaVM* vm) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return nullptr;
  return env;
}

}  // namespace

ClassPin PinDeclaringClass(JavaVM* vm, jvmtiEnv* jvmti, jmethodID method) {
  JNIEnv* env = CurrentEnv(vm);
  jclass klass = nullptr;
  if (env == nullptr || jvmti->GetMethodDeclaringClass(method, &klass) != JVMTI_ERROR_NONE || klass == nullptr) {
    return 0;
  }
  const jobject pin = env->NewGlobalRef(klass);
  env->DeleteLocalRef(klass);
  return PinOf(pin);
}

void ReleaseClassPin(JavaVM* vm, ClassPin pin) {
  if (pin == 0) return;
  if (JNIEnv* env = CurrentEnv(vm)) env->DeleteGlobalRef(JObjectOf(pin));
}

}  // namespace jitdump_agent
