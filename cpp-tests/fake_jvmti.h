// A fake jvmtiEnv: a value-initialized JVMTI function table with only the slots the agent's
// method lookups use, answering from plain structs. jmethodIDs are pointers to FakeMethod.
#pragma once

#include <jvmti.h>

#include <string>
#include <vector>

namespace test_support {

struct FakeClass {
  std::string signature;   // "Lp/A;"
  std::string source_file; // "" means JVMTI_ERROR_ABSENT_INFORMATION
};

struct FakeMethod {
  FakeClass* klass = nullptr;
  std::string name;
  std::string signature;
  std::vector<jvmtiLineNumberEntry> lines;  // empty: ABSENT_INFORMATION
  jlocation end_location = 100;
  bool native = false;
  bool valid = true;  // false: every call returns INVALID_METHODID (class unloaded)
  jmethodID id() { return reinterpret_cast<jmethodID>(this); }
};

struct FakeJvmtiCalls {
  int get_method_name = 0;
  int get_line_number_table = 0;
  int get_method_location = 0;
  int get_source_file_name = 0;
};

class FakeJvmti {
 public:
  FakeJvmti();
  jvmtiEnv* env() { return &env_; }
  static FakeJvmtiCalls& calls();

 private:
  jvmtiInterface_1_ table_{};
  _jvmtiEnv env_{};
};

}  // namespace test_support
