// JVMTI glue: a method's names, source file and line table from JVMTI (jvmti_method_lookup.h).
#include "agent/jvmti/jvmti_method_lookup.h"

#include <cstdint>

#include <vector>

#include "agent/core/intrinsic_names.h"
#include "agent/jvmti/jvm_ids.h"
#include "agent/core/log.h"
#include "agent/core/names.h"

namespace jitdump_agent {
namespace {

WarnOnce g_lookup_warning;
constexpr jint kAccNative = 0x0100;  // JVMS 4.6 access flag

// Owns memory JVMTI allocated for us and gives it back with Deallocate.
template <typename T>
class JvmtiPtr {
 public:
  explicit JvmtiPtr(jvmtiEnv* jvmti) : jvmti_(jvmti) {}
  ~JvmtiPtr() {
    if (ptr_ != nullptr) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(ptr_));
  }
  JvmtiPtr(const JvmtiPtr&) = delete;
  JvmtiPtr& operator=(const JvmtiPtr&) = delete;
  T** out() { return &ptr_; }
  T* get() const { return ptr_; }

 private:
  jvmtiEnv* jvmti_;
  T* ptr_ = nullptr;
};

// Outcomes that are normal for some methods (lambda proxies, natives, classes compiled
// without debug information) rather than failures.
bool IsExpectedAbsence(jvmtiError error) {
  return error == JVMTI_ERROR_ABSENT_INFORMATION || error == JVMTI_ERROR_NATIVE_METHOD;
}

}  // namespace

EndLocationAnswer JvmtiMethodLookup::EndLocation(MethodId method, int64_t* end_location) {
  jlocation start = 0, end = 0;
  const jvmtiError error = jvmti_->GetMethodLocation(JMethodOf(method), &start, &end);
  if (error == JVMTI_ERROR_WRONG_PHASE) return EndLocationAnswer::kJvmDead;
  if (error != JVMTI_ERROR_NONE) return EndLocationAnswer::kGone;
  *end_location = end;
  return EndLocationAnswer::kFound;
}

void JvmtiMethodLookup::Resolve(MethodId id, MethodInfo& info) {
  const jmethodID method = JMethodOf(id);
  JvmtiPtr<char> name(jvmti_), signature(jvmti_);
  jvmtiError error = jvmti_->GetMethodName(method, name.out(), signature.out(), nullptr);
  jclass klass = nullptr;
  if (error == JVMTI_ERROR_NONE) error = jvmti_->GetMethodDeclaringClass(method, &klass);
  JvmtiPtr<char> class_signature(jvmti_);
  if (error == JVMTI_ERROR_NONE) error = jvmti_->GetClassSignature(klass, class_signature.out(), nullptr);
  if (error != JVMTI_ERROR_NONE) {
    // WRONG_PHASE is expected once VM death has passed, and counted as that (unnamed_loads).
    info.refused_dying = error == JVMTI_ERROR_WRONG_PHASE;
    if (!info.refused_dying) stats_.lookup_errors.Add();
    if (g_lookup_warning.First()) Log(LogLevel::kInfo, "method lookup failed with JVMTI error %d", error);
    info.name = kUnknownJavaMethod;
    info.source.function = info.name;
    return;
  }
  info.resolved = true;
  const std::string klass_utf8 = ModifiedUtf8ToUtf8(class_signature.get());
  if (klass_utf8 == kMethodHandleClass) {
    // Only the intrinsics are ever compiled as native methods of MethodHandle (invokeExact and
    // invoke are linked through LambdaForms). One more JVMTI call, for this one class only.
    jint modifiers = 0;
    info.mh_intrinsic = jvmti_->GetMethodModifiers(method, &modifiers) == JVMTI_ERROR_NONE &&
                        (modifiers & kAccNative) != 0;
  }
  const std::string name_utf8 = ModifiedUtf8ToUtf8(name.get());
  const std::string signature_utf8 = ModifiedUtf8ToUtf8(signature.get());
  info.name = FormatMethodName(style_, klass_utf8, name_utf8, signature_utf8);
  info.perf_map_spelling = PerfMapMethodName(style_, klass_utf8, name_utf8, signature_utf8);
  info.source.function = FormatMethodName(NameStyle::kSimple, klass_utf8, name_utf8, signature_utf8);
  if (EndLocation(id, &info.end_location) != EndLocationAnswer::kFound) info.end_location = -1;
  if (!want_lines_) return;

  JvmtiPtr<char> source_file(jvmti_);
  error = jvmti_->GetSourceFileName(klass, source_file.out());
  if (error != JVMTI_ERROR_NONE) {
    if (!IsExpectedAbsence(error)) stats_.lookup_errors.Add();
    return;
  }
  jint count = 0;
  JvmtiPtr<jvmtiLineNumberEntry> table(jvmti_);
  error = jvmti_->GetLineNumberTable(method, &count, table.out());
  if (error != JVMTI_ERROR_NONE) {
    if (!IsExpectedAbsence(error)) stats_.lookup_errors.Add();
    return;
  }
  std::vector<LineNumber> lines;
  lines.reserve(static_cast<size_t>(count));
  for (jint i = 0; i < count; ++i) {
    const jlocation bci = table.get()[i].start_location;
    if (bci < 0 || bci > INT32_MAX) continue;  // never for a class file's LineNumberTable
    lines.push_back({static_cast<int32_t>(bci), table.get()[i].line_number});
  }
  info.source.file = SourcePath(klass_utf8, ModifiedUtf8ToUtf8(source_file.get()));
  info.source.lines = LineTable(std::move(lines));
}

}  // namespace jitdump_agent
