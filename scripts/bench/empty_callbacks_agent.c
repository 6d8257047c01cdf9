/* HotSpot's own floor for scripts/bench/agent-cost: a JVMTI agent that asks for the same
 * capabilities and enables the same three code events as libjitdumpagent, with callbacks that
 * do nothing. Whatever the JVM spends building and posting these events (the compile_info
 * record, the address map, the non-safepoint debug info HotSpot records while
 * CompiledMethodLoad is enabled) shows up with this agent too; what any real agent adds on top
 * of it is that agent's own cost. With the option "class_prepare" it also enables ClassPrepare,
 * as libjitdumpagent does with interp=on (the floor agent-cost --interp compares it with).
 * Built by agent-cost with the JDK's include directories. */
#include <jvmti.h>
#include <string.h>

static void JNICALL OnCompiledMethodLoad(jvmtiEnv* jvmti, jmethodID method, jint code_size,
                                         const void* code_addr, jint map_length,
                                         const jvmtiAddrLocationMap* map, const void* compile_info) {
  (void)jvmti, (void)method, (void)code_size, (void)code_addr, (void)map_length, (void)map,
      (void)compile_info;
}

static void JNICALL OnCompiledMethodUnload(jvmtiEnv* jvmti, jmethodID method, const void* code_addr) {
  (void)jvmti, (void)method, (void)code_addr;
}

static void JNICALL OnClassPrepare(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread, jclass klass) {
  (void)jvmti, (void)jni, (void)thread, (void)klass;
}

static void JNICALL OnDynamicCodeGenerated(jvmtiEnv* jvmti, const char* name, const void* address,
                                           jint length) {
  (void)jvmti, (void)name, (void)address, (void)length;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)reserved;
  const int class_prepare = options != NULL && strcmp(options, "class_prepare") == 0;
  jvmtiEnv* jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || jvmti == NULL) return 1;

  /* libjitdumpagent's capabilities (agent/jvmti/agent.cc): the event, then line numbers and source files. */
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_compiled_method_load_events = 1;
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return 1;

  jvmtiEventCallbacks callbacks;
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.CompiledMethodUnload = OnCompiledMethodUnload;
  callbacks.DynamicCodeGenerated = OnDynamicCodeGenerated;
  callbacks.ClassPrepare = OnClassPrepare;
  if ((*jvmti)->SetEventCallbacks(jvmti, &callbacks, (jint)sizeof callbacks) != JVMTI_ERROR_NONE) return 1;

  const jvmtiEvent events[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                               JVMTI_EVENT_DYNAMIC_CODE_GENERATED};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) != JVMTI_ERROR_NONE) return 1;
  if (class_prepare &&
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, NULL) != JVMTI_ERROR_NONE)
    return 1;
  return 0;
}
