// A fake JVM for the agent's JVMTI glue: a jvmtiEnv (a value-initialized JVMTI function table
// with only the slots the agent uses, answering from plain structs; jmethodIDs are pointers to
// FakeMethod) and a JavaVM with its JNIEnv, which track which threads are attached and which
// global references are still held.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/core/code_event.h"

namespace test_support {

struct FakeMethod;

struct FakeClass {
  FakeClass(std::string signature_ = "", std::string source_file_ = "")
      : signature(std::move(signature_)), source_file(std::move(source_file_)) {}
  std::string signature;   // "Lp/A;"
  std::string source_file; // "" means JVMTI_ERROR_ABSENT_INFORMATION
  std::vector<FakeMethod*> methods;  // GetClassMethods
  jint status = JVMTI_CLASS_STATUS_VERIFIED | JVMTI_CLASS_STATUS_PREPARED;  // GetClassStatus
};

struct FakeMethod {
  FakeClass* klass = nullptr;
  std::string name;
  std::string signature;
  std::vector<jvmtiLineNumberEntry> lines;  // empty: ABSENT_INFORMATION
  jlocation end_location = 100;
  bool native = false;
  bool valid = true;  // false: every call returns INVALID_METHODID (class unloaded)
  // The first GetMethodDeclaringClass of this method takes this long: a callback descheduled
  // in the middle (FakeJvmti::delays_begun() counts the delays begun).
  int declaring_class_delay_ms = 0;
  jmethodID id() { return reinterpret_cast<jmethodID>(this); }
  // The agent core's opaque spelling of id().
  jitdump_agent::MethodId mid() { return reinterpret_cast<uintptr_t>(this); }
};

struct FakeJvmtiCalls {
  int get_method_name = 0;
  int generate_events = 0;       // GenerateEvents, any kind
  int dispose_environment = 0;
  int set_event_callbacks = 0;
  int get_line_number_table = 0;
  int get_method_location = 0;
  int get_source_file_name = 0;
  int unattached = 0;  // calls refused with JVMTI_ERROR_UNATTACHED_THREAD
};

class FakeJvmti {
 public:
  FakeJvmti();
  jvmtiEnv* env() { return &env_; }
  static FakeJvmtiCalls& calls();
  // As in HotSpot, answer only threads the JVM knows (FakeJvm); off by default, so tests of
  // plain lookups may call from any thread.
  static bool& require_attached();
  // The JVM is past VM death: name lookups answer JVMTI_ERROR_WRONG_PHASE.
  static bool& dead();
  // What GetLoadedClasses lists.
  static std::vector<FakeClass*>& loaded_classes();
  static std::atomic<int>& delays_begun();
  // The events enabled now (SetEventNotificationMode), and the version GetSystemProperty gives.
  static bool enabled(jvmtiEvent event);
  static int enabled_count();
  static std::string& vm_version();

 private:
  jvmtiInterface_1_ table_{};
  _jvmtiEnv env_{};
};

// A JavaVM and its JNIEnv. A thread is attached once it called AttachCurrentThreadAsDaemon or
// ActAsJvmThread (what a thread the JVM runs callbacks on is), until DetachCurrentThread.
class FakeJvm {
 public:
  FakeJvm();
  ~FakeJvm();
  JavaVM* vm() { return &vm_; }
  // The calling thread becomes one of the JVM's own (attached for good).
  static void ActAsJvmThread();
  static bool CurrentThreadAttached();
  // GetEnv(JVMTI_VERSION_*) hands out this environment (null: JNI_EVERSION).
  static void SetJvmti(jvmtiEnv* jvmti);
  // Global references created and not yet deleted.
  static int live_global_refs();
  static int attaches();
  static int detaches();

 private:
  JNIInvokeInterface_ invoke_{};
  JavaVM_ vm_{};
};

}  // namespace test_support
