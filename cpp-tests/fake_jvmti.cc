#include "fake_jvmti.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace test_support {
namespace {

thread_local bool t_attached = false;
std::mutex g_refs_mutex;
std::map<jobject, int> g_global_refs;
std::atomic<int> g_attaches{0};
std::atomic<int> g_detaches{0};

FakeMethod* AsMethod(jmethodID id) { return reinterpret_cast<FakeMethod*>(id); }

// JVMTI answers only threads the JVM knows.
bool Refused() {
  if (!FakeJvmti::require_attached() || t_attached) return false;
  ++FakeJvmti::calls().unattached;
  return true;
}

char* Copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

jvmtiError JNICALL GetMethodName(jvmtiEnv*, jmethodID id, char** name, char** sig, char** generic) {
  ++FakeJvmti::calls().get_method_name;
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  if (FakeJvmti::dead()) return JVMTI_ERROR_WRONG_PHASE;  // as HotSpot once VMDeath has returned
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  if (name) *name = Copy(m->name);
  if (sig) *sig = Copy(m->signature);
  if (generic) *generic = nullptr;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetMethodModifiers(jvmtiEnv*, jmethodID id, jint* modifiers) {
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  *modifiers = m->native ? 0x0100 : 0;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetMethodDeclaringClass(jvmtiEnv*, jmethodID id, jclass* klass) {
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  FakeMethod* m = AsMethod(id);
  if (m->declaring_class_delay_ms > 0) {
    const int delay = std::exchange(m->declaring_class_delay_ms, 0);
    ++FakeJvmti::delays_begun();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  }
  if (FakeJvmti::dead()) return JVMTI_ERROR_WRONG_PHASE;
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  *klass = reinterpret_cast<jclass>(m->klass);
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetClassSignature(jvmtiEnv*, jclass klass, char** sig, char** generic) {
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  if (FakeJvmti::dead()) return JVMTI_ERROR_WRONG_PHASE;
  if (sig) *sig = Copy(reinterpret_cast<FakeClass*>(klass)->signature);
  if (generic) *generic = nullptr;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetSourceFileName(jvmtiEnv*, jclass klass, char** name) {
  ++FakeJvmti::calls().get_source_file_name;
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  const FakeClass* c = reinterpret_cast<FakeClass*>(klass);
  if (c->source_file.empty()) return JVMTI_ERROR_ABSENT_INFORMATION;
  *name = Copy(c->source_file);
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetLineNumberTable(jvmtiEnv*, jmethodID id, jint* count, jvmtiLineNumberEntry** table) {
  ++FakeJvmti::calls().get_line_number_table;
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  if (m->native) return JVMTI_ERROR_NATIVE_METHOD;
  if (m->lines.empty()) return JVMTI_ERROR_ABSENT_INFORMATION;
  *count = static_cast<jint>(m->lines.size());
  *table = static_cast<jvmtiLineNumberEntry*>(std::malloc(m->lines.size() * sizeof(jvmtiLineNumberEntry)));
  std::memcpy(*table, m->lines.data(), m->lines.size() * sizeof(jvmtiLineNumberEntry));
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetMethodLocation(jvmtiEnv*, jmethodID id, jlocation* start, jlocation* end) {
  ++FakeJvmti::calls().get_method_location;
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  if (FakeJvmti::dead()) return JVMTI_ERROR_WRONG_PHASE;
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  *start = m->native ? -1 : 0;
  *end = m->native ? -1 : m->end_location;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL Deallocate(jvmtiEnv*, unsigned char* mem) {
  std::free(mem);
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GenerateEvents(jvmtiEnv*, jvmtiEvent) {
  ++FakeJvmti::calls().generate_events;
  return JVMTI_ERROR_NONE;
}

std::mutex g_events_mutex;
std::map<jvmtiEvent, bool> g_enabled;
jvmtiEnv* g_jvmti = nullptr;

jvmtiError JNICALL AddCapabilities(jvmtiEnv*, const jvmtiCapabilities*) { return JVMTI_ERROR_NONE; }

jvmtiError JNICALL GetJLocationFormat(jvmtiEnv*, jvmtiJlocationFormat* format) {
  *format = JVMTI_JLOCATION_JVMBCI;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetSystemProperty(jvmtiEnv*, const char* property, char** value) {
  if (std::string(property) != "java.vm.version") return JVMTI_ERROR_NOT_AVAILABLE;
  *value = Copy(FakeJvmti::vm_version());
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL SetEventCallbacks(jvmtiEnv*, const jvmtiEventCallbacks*, jint) {
  ++FakeJvmti::calls().set_event_callbacks;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL SetEventNotificationMode(jvmtiEnv*, jvmtiEventMode mode, jvmtiEvent event, jthread, ...) {
  if (Refused()) return JVMTI_ERROR_UNATTACHED_THREAD;
  std::lock_guard<std::mutex> lock(g_events_mutex);
  g_enabled[event] = mode == JVMTI_ENABLE;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL DisposeEnvironment(jvmtiEnv*) {
  ++FakeJvmti::calls().dispose_environment;
  return JVMTI_ERROR_NONE;
}

// JNI: only what the agent calls.
JNIEnv_ g_jni_env{};
JNINativeInterface_ g_jni_table{};

jobject JNICALL NewGlobalRef(JNIEnv*, jobject obj) {
  if (obj == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(g_refs_mutex);
  ++g_global_refs[obj];
  return obj;
}

void JNICALL DeleteGlobalRef(JNIEnv*, jobject obj) {
  std::lock_guard<std::mutex> lock(g_refs_mutex);
  auto it = g_global_refs.find(obj);
  if (it != g_global_refs.end() && --it->second == 0) g_global_refs.erase(it);
}

void JNICALL DeleteLocalRef(JNIEnv*, jobject) {}
jint JNICALL PushLocalFrame(JNIEnv*, jint) { return JNI_OK; }
jobject JNICALL PopLocalFrame(JNIEnv*, jobject result) { return result; }

jint JNICALL GetEnv(JavaVM*, void** env, jint version) {
  if ((version & 0x30000000) == 0x30000000) {  // JVMTI_VERSION_*
    *env = g_jvmti;
    return g_jvmti != nullptr ? JNI_OK : JNI_EVERSION;
  }
  if (!t_attached) {
    *env = nullptr;
    return JNI_EDETACHED;
  }
  *env = &g_jni_env;
  return JNI_OK;
}

jint JNICALL AttachCurrentThreadAsDaemon(JavaVM*, void** env, void*) {
  t_attached = true;
  ++g_attaches;
  *env = &g_jni_env;
  return JNI_OK;
}

jint JNICALL DetachCurrentThread(JavaVM*) {
  t_attached = false;
  ++g_detaches;
  return JNI_OK;
}

}  // namespace

FakeJvm::FakeJvm() {
  g_jni_table.NewGlobalRef = NewGlobalRef;
  g_jni_table.DeleteGlobalRef = DeleteGlobalRef;
  g_jni_table.DeleteLocalRef = DeleteLocalRef;
  g_jni_table.PushLocalFrame = PushLocalFrame;
  g_jni_table.PopLocalFrame = PopLocalFrame;
  g_jni_env.functions = &g_jni_table;
  invoke_.GetEnv = GetEnv;
  invoke_.AttachCurrentThreadAsDaemon = AttachCurrentThreadAsDaemon;
  invoke_.DetachCurrentThread = DetachCurrentThread;
  vm_.functions = &invoke_;
  std::lock_guard<std::mutex> lock(g_refs_mutex);
  g_global_refs.clear();
  g_attaches = 0;
  g_detaches = 0;
}

FakeJvm::~FakeJvm() { t_attached = false; }

void FakeJvm::SetJvmti(jvmtiEnv* jvmti) { g_jvmti = jvmti; }

void FakeJvm::ActAsJvmThread() { t_attached = true; }
bool FakeJvm::CurrentThreadAttached() { return t_attached; }

int FakeJvm::live_global_refs() {
  std::lock_guard<std::mutex> lock(g_refs_mutex);
  int count = 0;
  for (const auto& [ref, n] : g_global_refs) count += n;
  return count;
}

int FakeJvm::attaches() { return g_attaches; }
int FakeJvm::detaches() { return g_detaches; }

std::atomic<int>& FakeJvmti::delays_begun() {
  static std::atomic<int> begun{0};
  return begun;
}

bool FakeJvmti::enabled(jvmtiEvent event) {
  std::lock_guard<std::mutex> lock(g_events_mutex);
  const auto it = g_enabled.find(event);
  return it != g_enabled.end() && it->second;
}

int FakeJvmti::enabled_count() {
  std::lock_guard<std::mutex> lock(g_events_mutex);
  int count = 0;
  for (const auto& [event, on] : g_enabled) count += on;
  return count;
}

std::string& FakeJvmti::vm_version() {
  static std::string version = "17.0.21+6-Debian-1deb12u1";
  return version;
}

bool& FakeJvmti::dead() {
  static bool dead = false;
  return dead;
}

bool& FakeJvmti::require_attached() {
  static bool require = false;
  return require;
}

FakeJvmtiCalls& FakeJvmti::calls() {
  static FakeJvmtiCalls calls;
  return calls;
}

FakeJvmti::FakeJvmti() {
  table_.GetMethodName = GetMethodName;
  table_.GetMethodDeclaringClass = GetMethodDeclaringClass;
  table_.GetMethodModifiers = GetMethodModifiers;
  table_.GetClassSignature = GetClassSignature;
  table_.GetSourceFileName = GetSourceFileName;
  table_.GetLineNumberTable = GetLineNumberTable;
  table_.GetMethodLocation = GetMethodLocation;
  table_.Deallocate = Deallocate;
  table_.GenerateEvents = GenerateEvents;
  table_.AddCapabilities = AddCapabilities;
  table_.GetJLocationFormat = GetJLocationFormat;
  table_.GetSystemProperty = GetSystemProperty;
  table_.SetEventCallbacks = SetEventCallbacks;
  table_.SetEventNotificationMode = SetEventNotificationMode;
  table_.DisposeEnvironment = DisposeEnvironment;
  env_.functions = &table_;
  {
    std::lock_guard<std::mutex> lock(g_events_mutex);
    g_enabled.clear();
  }
  calls() = FakeJvmtiCalls();
  require_attached() = false;
  dead() = false;
  delays_begun() = 0;
}

}  // namespace test_support
