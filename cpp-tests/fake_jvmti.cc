#include "fake_jvmti.h"

#include <cstdlib>
#include <cstring>

namespace test_support {
namespace {

FakeMethod* AsMethod(jmethodID id) { return reinterpret_cast<FakeMethod*>(id); }

char* Copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

jvmtiError JNICALL GetMethodName(jvmtiEnv*, jmethodID id, char** name, char** sig, char** generic) {
  ++FakeJvmti::calls().get_method_name;
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  if (name) *name = Copy(m->name);
  if (sig) *sig = Copy(m->signature);
  if (generic) *generic = nullptr;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetMethodDeclaringClass(jvmtiEnv*, jmethodID id, jclass* klass) {
  FakeMethod* m = AsMethod(id);
  if (!m->valid) return JVMTI_ERROR_INVALID_METHODID;
  *klass = reinterpret_cast<jclass>(m->klass);
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetClassSignature(jvmtiEnv*, jclass klass, char** sig, char** generic) {
  if (sig) *sig = Copy(reinterpret_cast<FakeClass*>(klass)->signature);
  if (generic) *generic = nullptr;
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetSourceFileName(jvmtiEnv*, jclass klass, char** name) {
  ++FakeJvmti::calls().get_source_file_name;
  const FakeClass* c = reinterpret_cast<FakeClass*>(klass);
  if (c->source_file.empty()) return JVMTI_ERROR_ABSENT_INFORMATION;
  *name = Copy(c->source_file);
  return JVMTI_ERROR_NONE;
}

jvmtiError JNICALL GetLineNumberTable(jvmtiEnv*, jmethodID id, jint* count, jvmtiLineNumberEntry** table) {
  ++FakeJvmti::calls().get_line_number_table;
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

}  // namespace

FakeJvmtiCalls& FakeJvmti::calls() {
  static FakeJvmtiCalls calls;
  return calls;
}

FakeJvmti::FakeJvmti() {
  table_.GetMethodName = GetMethodName;
  table_.GetMethodDeclaringClass = GetMethodDeclaringClass;
  table_.GetClassSignature = GetClassSignature;
  table_.GetSourceFileName = GetSourceFileName;
  table_.GetLineNumberTable = GetLineNumberTable;
  table_.GetMethodLocation = GetMethodLocation;
  table_.Deallocate = Deallocate;
  env_.functions = &table_;
  calls() = FakeJvmtiCalls();
}

}  // namespace test_support
