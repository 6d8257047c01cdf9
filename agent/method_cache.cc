#include "agent/method_cache.h"

#include <vector>

#include "agent/jvmti_util.h"
#include "agent/log.h"
#include "agent/names.h"

namespace jitdump_agent {
namespace {

WarnOnce g_lookup_warning;

}  // namespace

MethodCache::MethodCache(jvmtiEnv* jvmti, NameStyle style, bool want_lines, size_t capacity, Stats& stats)
    : jvmti_(jvmti), style_(style), want_lines_(want_lines), capacity_(capacity), stats_(stats) {
  entries_.reserve(capacity);
}

std::unique_lock<std::mutex> MethodCache::Lock() { return std::unique_lock<std::mutex>(mutex_); }

void MethodCache::BeginCallback() {
  if (entries_.size() >= capacity_) {
    // The hard bound: reached only when one callback brought more new methods than trimming
    // keeps up with, or with capacity 0 (cache=0), where entries then live only as long as the
    // frames of one load that point at them.
    if (capacity_ != 0) stats_.method_cache_clears.Add();
    entries_.clear();
  } else if (entries_.size() > capacity_ - capacity_ / 8) {
    Trim(kTrimPerCallback);
  }
  stats_.method_cache_high.Offer(entries_.size());
  ++callback_;
  ForgetRecent();
}

void MethodCache::Trim(size_t count) {
  // Buckets in turn: which methods share a bucket depends on their jmethodID's address, not on
  // how recently they were used, so this sheds old and new entries alike.
  const size_t buckets = entries_.bucket_count();
  for (size_t visited = 0; count > 0 && visited < buckets; ++visited) {
    const size_t bucket = trim_bucket_++ % buckets;
    while (count > 0 && entries_.bucket_size(bucket) > 0) {
      entries_.erase(entries_.begin(bucket)->first);
      --count;
    }
  }
}

void MethodCache::Evict(jmethodID method) {
  entries_.erase(method);
  ForgetRecent();
}

const MethodInfo* MethodCache::Get(jmethodID method) {
  for (size_t i = 0; i < recent_count_; ++i) {
    if (recent_[i].method == method) return recent_[i].info;
  }
  auto [it, inserted] = entries_.try_emplace(method);
  MethodInfo& cached = it->second;
  if (!inserted) {
    // Failed before (failing again costs more than it helps), or already confirmed in this callback.
    if (!cached.resolved || cached.validated_in == callback_) return Remember(method, &cached);
    jlocation start = 0, end = 0;
    stats_.method_validations.Add();
    if (jvmti_->GetMethodLocation(method, &start, &end) == JVMTI_ERROR_NONE && end == cached.end_location) {
      cached.validated_in = callback_;
      return Remember(method, &cached);
    }
    // Redefined (or the id no longer resolves): look it up again.
  }
  // Nothing of this callback points at the old contents: they were not validated in it.
  cached = MethodInfo();
  Resolve(method, cached);
  cached.validated_in = callback_;
  return Remember(method, &cached);
}

MethodInfo* MethodCache::Remember(jmethodID method, MethodInfo* info) {
  if (recent_count_ < kRecentCapacity) {
    recent_[recent_count_++] = {method, info};
  } else {
    recent_[recent_next_] = {method, info};
    recent_next_ = (recent_next_ + 1) % kRecentCapacity;
  }
  return info;
}

void MethodCache::Resolve(jmethodID method, MethodInfo& info) {
  stats_.method_lookups.Add();
  JvmtiPtr<char> name(jvmti_), signature(jvmti_);
  jvmtiError error = jvmti_->GetMethodName(method, name.out(), signature.out(), nullptr);
  jclass klass = nullptr;
  if (error == JVMTI_ERROR_NONE) error = jvmti_->GetMethodDeclaringClass(method, &klass);
  JvmtiPtr<char> class_signature(jvmti_);
  if (error == JVMTI_ERROR_NONE) error = jvmti_->GetClassSignature(klass, class_signature.out(), nullptr);
  if (error != JVMTI_ERROR_NONE) {
    stats_.lookup_errors.Add();
    if (g_lookup_warning.First()) Log(LogLevel::kInfo, "method lookup failed with JVMTI error %d", error);
    info.name = "[unknown Java method]";
    info.source.function = info.name;
    return;
  }
  info.resolved = true;
  const std::string klass_utf8 = ModifiedUtf8ToUtf8(class_signature.get());
  const std::string name_utf8 = ModifiedUtf8ToUtf8(name.get());
  const std::string signature_utf8 = ModifiedUtf8ToUtf8(signature.get());
  info.name = FormatMethodName(style_, klass_utf8, name_utf8, signature_utf8);
  info.source.function = FormatMethodName(NameStyle::kSimple, klass_utf8, name_utf8, signature_utf8);
  jlocation start = 0;
  if (jvmti_->GetMethodLocation(method, &start, &info.end_location) != JVMTI_ERROR_NONE) info.end_location = -1;
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
  for (jint i = 0; i < count; ++i) lines.push_back({table.get()[i].start_location, table.get()[i].line_number});
  info.source.file = SourcePath(klass_utf8, ModifiedUtf8ToUtf8(source_file.get()));
  info.source.lines = LineTable(std::move(lines));
}

}  // namespace jitdump_agent
