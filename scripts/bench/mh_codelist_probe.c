/* A measurement (docs/agent.md, "Method names"): can an agent name the
 * JVM's method-handle intrinsic nmethods (invokeBasic, linkTo*) from inside the JVM?
 *
 * JVMTI hands every intrinsic's CompiledMethodLoad the same jmethodID, which resolves to the
 * first intrinsic HotSpot created. This probe records the code address of every load whose
 * method is a native method of java.lang.invoke.MethodHandle (only the intrinsics are), then at
 * VMDeath runs the JVM's own Compiler.codelist through the JMM interface (JVM_GetManagement,
 * exported by libjvm.so; the interface behind com.sun.management's DiagnosticCommand MBean) and
 * looks each address up in its output, which names each intrinsic with its signature.
 *
 *   cc -O2 -Wall -Wextra -shared -fPIC -I$JAVA_HOME/include -I$JAVA_HOME/include/linux \
 *      -o libmh_codelist_probe.so scripts/bench/mh_codelist_probe.c
 *   java -agentpath:$PWD/libmh_codelist_probe.so -cp CLASSES MhIntrinsics 0
 */
#include <dlfcn.h>
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* jmm.h is not in a JDK's include directory: its JmmInterface as slots. ExecuteDiagnosticCommand
 * is slot 38 up to JMM_VERSION_3 (JDK 11.0.9 to 20) and slot 39 from JMM_VERSION_4 (JDK 21
 * inserted GetTotalThreadAllocatedMemory before it). Calling slot 38 on JDK 25 calls another
 * function: any use of this interface must key the slot on the version it was granted. */
typedef struct { void* slot[40]; } JmmSlots;
typedef JmmSlots* (*GetManagementFn)(jint version);
typedef jstring (JNICALL *ExecuteDiagnosticCommandFn)(JNIEnv*, jstring);

enum { kMaxLoads = 4096, kAccNative = 0x0100 };
static const void* g_addrs[kMaxLoads];
static int g_count;
static jrawMonitorID g_lock;

static void JNICALL OnCompiledMethodLoad(jvmtiEnv* jvmti, jmethodID method, jint code_size, const void* code_addr,
                                         jint map_length, const jvmtiAddrLocationMap* map, const void* compile_info) {
  (void)code_size, (void)map_length, (void)map, (void)compile_info;
  jclass klass;
  char* signature = NULL;
  jint modifiers = 0;
  if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) != JVMTI_ERROR_NONE ||
      (*jvmti)->GetClassSignature(jvmti, klass, &signature, NULL) != JVMTI_ERROR_NONE)
    return;
  if (strcmp(signature, "Ljava/lang/invoke/MethodHandle;") == 0 &&
      (*jvmti)->GetMethodModifiers(jvmti, method, &modifiers) == JVMTI_ERROR_NONE && (modifiers & kAccNative)) {
    (*jvmti)->RawMonitorEnter(jvmti, g_lock);
    if (g_count < kMaxLoads) g_addrs[g_count++] = code_addr;
    (*jvmti)->RawMonitorExit(jvmti, g_lock);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char*)signature);
}

static void JNICALL OnVMDeath(jvmtiEnv* jvmti, JNIEnv* env) {
  (void)jvmti;
  GetManagementFn get = (GetManagementFn)dlsym(RTLD_DEFAULT, "JVM_GetManagement");
  int slot = 39;
  JmmSlots* jmm = get ? get(0x20040000) : NULL; /* JMM_VERSION_4 */
  if (jmm == NULL && get != NULL) jmm = get(0x20030000), slot = 38; /* JMM_VERSION_3 */
  if (jmm == NULL) {
    fprintf(stderr, "probe: no JMM interface\n");
    return;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  jstring out = ((ExecuteDiagnosticCommandFn)jmm->slot[slot])(env, (*env)->NewStringUTF(env, "Compiler.codelist"));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if ((*env)->ExceptionCheck(env) || out == NULL) {
    fprintf(stderr, "probe: Compiler.codelist failed\n");
    (*env)->ExceptionClear(env);
    return;
  }
  const char* text = (*env)->GetStringUTFChars(env, out, NULL);
  int named = 0;
  for (int i = 0; i < g_count; i++) {
    char key[64]; /* codelist lines: "id level state name [start, code_begin - end]" */
    snprintf(key, sizeof key, ", 0x%016lx - ", (unsigned long)g_addrs[i]);
    const char* hit = strstr(text, key);
    if (hit == NULL) continue;
    const char* line = hit;
    while (line > text && line[-1] != '\n') line--;
    named++;
    fprintf(stderr, "probe: %p %.*s\n", g_addrs[i], (int)(hit - line), line);
  }
  fprintf(stderr, "probe: JMM slot %d; %d MethodHandle native loads, %d named by code address in Compiler.codelist "
          "(%zu bytes of output, %.2f ms)\n", slot, g_count, named, strlen(text),
          (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  (*env)->ReleaseStringUTFChars(env, out, text);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void* reserved) {
  (void)options, (void)reserved;
  jvmtiEnv* jvmti;
  if ((*vm)->GetEnv(vm, (void**)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_compiled_method_load_events = 1;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) return 1;
  (*jvmti)->CreateRawMonitor(jvmti, "mh_codelist_probe", &g_lock);
  jvmtiEventCallbacks callbacks;
  memset(&callbacks, 0, sizeof callbacks);
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.VMDeath = OnVMDeath;
  (*jvmti)->SetEventCallbacks(jvmti, &callbacks, sizeof callbacks);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
  return 0;
}
