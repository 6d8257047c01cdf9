// JVMTI glue: describing classes and methods for the method table (jvm_method_source.h).
#include "agent/jvmti/jvm_method_source.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "agent/jvmti/class_pin.h"
#include "agent/jvmti/jvm_ids.h"
#include "agent/core/names.h"

namespace jitdump_agent {
namespace {

// Owns memory JVMTI allocated and gives it back.
class JvmtiMemory {
 public:
  explicit JvmtiMemory(jvmtiEnv* jvmti) : jvmti_(jvmti) {}
  ~JvmtiMemory() {
    for (void* p : owned_) jvmti_->Deallocate(static_cast<unsigned char*>(p));
  }
  JvmtiMemory(const JvmtiMemory&) = delete;
  JvmtiMemory& operator=(const JvmtiMemory&) = delete;
  template <typename T>
  T* Own(T* p) {
    if (p != nullptr) owned_.push_back(p);
    return p;
  }

 private:
  jvmtiEnv* jvmti_;
  std::vector<void*> owned_;
};

}  // namespace

JNIEnv* JvmMethodSource::Env() {
  JNIEnv* env = nullptr;
  return vm_->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) == JNI_OK ? env : nullptr;
}

bool JvmMethodSource::refuted() const {
  return checked_ >= kVerdictAfter && mismatched_ * 100 > checked_ * kMaxMismatchPercent;
}

uint64_t JvmMethodSource::ReadSlot(MethodId id) {
  // The jmethodID's slot (see the header): never freed, so always readable.
  uint64_t method;
  std::memcpy(&method, reinterpret_cast<const void*>(static_cast<uintptr_t>(id)), sizeof method);
  return method;
}

uint64_t JvmMethodSource::CurrentMethod(MethodId id) { return read_slot_(id); }

bool JvmMethodSource::DescribeOne(jmethodID method, ClassMethods::Method* out) {
  JvmtiMemory memory(jvmti_);
  char* name = nullptr;
  char* descriptor = nullptr;
  if (jvmti_->GetMethodName(method, &name, &descriptor, nullptr) != JVMTI_ERROR_NONE) return false;
  memory.Own(name);
  memory.Own(descriptor);
  out->id = IdOf(method);
  out->name = ModifiedUtf8ToUtf8(name);
  out->descriptor = ModifiedUtf8ToUtf8(descriptor);
  out->lines.clear();
  // The line table's answer also says whether the method is native: one call, not two.
  jint count = 0;
  jvmtiLineNumberEntry* table = nullptr;
  const jvmtiError error = jvmti_->GetLineNumberTable(method, &count, &table);
  out->native = error == JVMTI_ERROR_NATIVE_METHOD;
  if (error != JVMTI_ERROR_NONE) return out->native || error == JVMTI_ERROR_ABSENT_INFORMATION;
  memory.Own(table);
  out->lines.reserve(static_cast<size_t>(count));
  for (jint i = 0; i < count; ++i) {
    if (table[i].start_location < 0 || table[i].start_location > UINT32_MAX || table[i].line_number < 0) continue;
    out->lines.push_back({static_cast<uint32_t>(table[i].start_location), static_cast<uint32_t>(table[i].line_number)});
  }
  // JVMTI gives class-file order, not sorted.
  std::stable_sort(out->lines.begin(), out->lines.end(),
                   [](const jitdump::MethodTableLine& a, const jitdump::MethodTableLine& b) { return a.bci < b.bci; });
  return true;
}

int64_t JvmMethodSource::EndLocationToCheck(jmethodID method, const ClassMethods::Method& m, bool always) {
  // Every method until the verdict on the layout is in, then one in kCheckEvery.
  if (m.native || (!always && checked_ >= kVerdictAfter && ++unchecked_ % kCheckEvery != 0)) return kUnchecked;
  jlocation start = 0, end = -1;
  if (jvmti_->GetMethodLocation(method, &start, &end) != JVMTI_ERROR_NONE) return kUnchecked;
  return end;
}

void JvmMethodSource::Locate(ClassMethods* out, const std::vector<int64_t>& end_locations) {
  const size_t n = out->methods.size();
  std::vector<uint64_t> addrs(n), values(n);
  // std::vector<bool> is no contiguous bool array: a span needs real bools.
  std::unique_ptr<bool[]> ok(new bool[n]);
  for (size_t i = 0; i < n; ++i) {
    ClassMethods::Method& m = out->methods[i];
    m.method = CurrentMethod(m.id);
    addrs[i] = m.method + layout_.method_const_method;
  }
  memory_.ReadEach(addrs, 8, values, std::span<bool>(ok.get(), n));  // each Method's ConstMethod*
  std::vector<uint64_t> const_methods(values);
  std::vector<bool> readable(n);
  for (size_t i = 0; i < n; ++i) {
    readable[i] = ok[i] && const_methods[i] != 0;
    addrs[i] = const_methods[i] + layout_.const_method_code_size;
  }
  memory_.ReadEach(addrs, 2, values, std::span<bool>(ok.get(), n));  // each ConstMethod's _code_size
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    ClassMethods::Method& m = out->methods[i];
    if (!readable[i] || !ok[i]) {
      ++out->unreadable;
      continue;
    }
    m.code_size = static_cast<uint32_t>(values[i]);
    m.code_base = const_methods[i] + layout_.const_method_size;
    if (end_locations[i] != kUnchecked) {
      // JVMTI's last location of a method with bytecodes is its code size minus one.
      ++checked_;
      if (end_locations[i] + 1 != static_cast<int64_t>(m.code_size)) {
        ++mismatched_;
        ++out->unreadable;
        continue;
      }
    }
    if (kept != i) out->methods[kept] = std::move(m);
    ++kept;
  }
  out->methods.resize(kept);
}

bool JvmMethodSource::Describe(jclass klass, ClassMethods* out, bool check_all) {
  JvmtiMemory memory(jvmti_);
  char* signature = nullptr;
  if (jvmti_->GetClassSignature(klass, &signature, nullptr) != JVMTI_ERROR_NONE) return false;
  memory.Own(signature);
  const std::string class_signature = ModifiedUtf8ToUtf8(signature);
  out->name = ClassName(class_signature);
  char* source = nullptr;
  out->file.clear();
  if (jvmti_->GetSourceFileName(klass, &source) == JVMTI_ERROR_NONE) {
    memory.Own(source);
    out->file = SourcePath(class_signature, ModifiedUtf8ToUtf8(source));
  }
  jint count = 0;
  jmethodID* methods = nullptr;
  if (jvmti_->GetClassMethods(klass, &count, &methods) != JVMTI_ERROR_NONE) return false;
  memory.Own(methods);
  out->methods.clear();
  out->unreadable = 0;
  out->methods.reserve(static_cast<size_t>(count));
  std::vector<int64_t> end_locations;
  end_locations.reserve(static_cast<size_t>(count));
  for (jint i = 0; i < count; ++i) {
    ClassMethods::Method m;
    if (!DescribeOne(methods[i], &m)) {
      ++out->unreadable;
      continue;
    }
    end_locations.push_back(EndLocationToCheck(methods[i], m, check_all));
    out->methods.push_back(std::move(m));
  }
  Locate(out, end_locations);
  return true;
}

bool JvmMethodSource::DescribePinned(ClassPin pin, ClassMethods* out) {
  const bool described = Describe(static_cast<jclass>(JObjectOf(pin)), out);
  ReleaseClassPin(vm_, pin);
  return described;
}

void JvmMethodSource::DescribeLoaded(const std::function<void(const ClassMethods&)>& each) {
  JNIEnv* env = Env();
  if (env == nullptr) return;
  jint count = 0;
  jclass* classes = nullptr;
  if (jvmti_->GetLoadedClasses(&count, &classes) != JVMTI_ERROR_NONE) return;
  ClassMethods klass;
  for (jint i = 0; i < count; ++i) {
    jint status = 0;
    // Array and primitive classes have no methods; a class not yet prepared will have its
    // ClassPrepare.
    if (jvmti_->GetClassStatus(classes[i], &status) == JVMTI_ERROR_NONE &&
        (status & JVMTI_CLASS_STATUS_PREPARED) != 0 &&
        (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)) == 0) {
      if (Describe(classes[i], &klass)) {
        each(klass);
      } else {
        stats_.method_table_classes_lost.Add();
      }
    }
    env->DeleteLocalRef(classes[i]);  // the writer never returns to Java: nothing frees them else
  }
  jvmti_->Deallocate(reinterpret_cast<unsigned char*>(classes));
}

bool JvmMethodSource::DescribeClassOf(MethodId id, ClassMethods* out) {
  JNIEnv* env = Env();
  if (env == nullptr) return false;
  jclass klass = nullptr;
  // The local reference keeps the class loaded while it is read.
  if (jvmti_->GetMethodDeclaringClass(JMethodOf(id), &klass) != JVMTI_ERROR_NONE || klass == nullptr) return false;
  const bool described = Describe(klass, out, /*check_all=*/true);
  env->DeleteLocalRef(klass);
  return described;
}

}  // namespace jitdump_agent
