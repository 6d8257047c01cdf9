// The writer thread's method table (method_table_writer.h).
#include "agent/core/method_table_writer.h"

#include <elf.h>

#include <algorithm>
#include <unordered_set>

#include "agent/core/clock.h"

namespace jitdump_agent {
namespace {

// A method id points at a Method* or, once its class is gone, at nothing: HotSpot clears the
// slot at unload (JDK-8268364) or marks it freed with a small constant.
bool IsMethodPointer(uint64_t value) { return value >= 4096 && value % 8 == 0; }

}  // namespace

jitdump::Status MethodTableWriter::Open(const jitdump::HeldDirectory& dir, const std::string& name,
                                        const jitdump::CreateRules& rules, uint32_t pid, uint64_t now,
                                        const InterpreterLayout& layout, std::string_view jvm_version) {
  const jitdump::Status status = file_.Create(dir, name, rules, pid, now);
  if (!status.ok()) return status;
  jitdump::MethodTableLayout record;
  record.elf_machine = EM_X86_64;
  record.jvm_feature = layout.jvm_feature;
  record.word_size = 8;
  record.method_slot = layout.method_slot;
  record.bcp_slot = layout.bcp_slot;
  record.complete_slot = layout.complete_slot;
  record.bcp_register = jitdump::kPerfRegX86R13;
  record.method_register = jitdump::kPerfRegX86Bx;
  record.jvm_version = jvm_version;
  (void)jitdump::AppendLayoutRecord(pending_, now, record);
  last_sweep_ = now;
  return Flush();
}

bool MethodTableWriter::Write(uint64_t timestamp, const ClassMethods& klass, const ClassMethods::Method& m,
                              uint32_t flags, uint64_t* class_id) {
  if (*class_id == 0) {
    const uint64_t id = next_class_;
    if (!jitdump::AppendClassRecord(pending_, {timestamp, id, klass.name, klass.file})) return false;
    ++next_class_;
    ++counts_.classes;
    *class_id = id;
  }
  jitdump::MethodTableMethod record;
  record.timestamp = timestamp;
  record.serial = next_serial_;
  record.method = m.method;
  record.code_base = m.code_base;
  record.class_id = *class_id;
  record.code_size = m.code_size;
  record.flags = flags | (m.native ? jitdump::kMethodNative : 0);
  record.name = m.name;
  record.descriptor = m.descriptor;
  record.lines = m.lines;
  if (!jitdump::AppendMethodRecord(pending_, record)) return false;
  ++pending_methods_;
  if (tracked_.size() < kMaxTracked || tracked_.count(m.method) != 0) {
    tracked_[m.method] = Tracked{m.id, next_serial_, timestamp};
    stats_.method_table_tracked_high.Offer(tracked_.size());
  } else {
    stats_.method_table_untracked.Add();
  }
  ++next_serial_;
  return true;
}

void MethodTableWriter::AddClass(uint64_t timestamp, const ClassMethods& klass) {
  if (!file_.is_open()) return;
  stats_.method_table_methods_lost.Add(klass.unreadable);
  uint64_t class_id = 0;
  for (const ClassMethods::Method& m : klass.methods) {
    const auto it = tracked_.find(m.method);
    // The same method met twice (a class prepared while the table's first pass listed it).
    if (it != tracked_.end() && it->second.id == m.id) continue;
    if (!Write(timestamp, klass, m, 0, &class_id)) stats_.method_table_methods_lost.Add();
  }
}

void MethodTableWriter::Sweep(uint64_t now, MethodSource& source) {
  if (!file_.is_open()) return;
  const uint64_t start = MonotonicNanos();
  const uint64_t previous = last_sweep_;
  last_sweep_ = now;
  std::vector<std::pair<uint64_t, Tracked>> changed;
  for (const auto& [method, tracked] : tracked_) {
    if (source.CurrentMethod(tracked.id) != method) changed.emplace_back(method, tracked);
  }
  sweep_interval_ = changed.empty() ? std::min(2 * sweep_interval_, kMaxSweepIntervalNs) : kSweepIntervalNs;
  std::unordered_set<MethodId> described;  // ids of the classes described again in this sweep
  for (const auto& [method, tracked] : changed) {
    // The entry may already hold a newer method written below (HotSpot reused the address).
    if (const auto it = tracked_.find(method); it != tracked_.end() && it->second.serial == tracked.serial) {
      tracked_.erase(it);
    }
    const uint64_t current = source.CurrentMethod(tracked.id);
    if (!IsMethodPointer(current)) {  // its class was unloaded
      jitdump::AppendRetireRecord(pending_, now, tracked.serial, method);
      ++counts_.retired;
      stats_.method_table_retired.Add();
      continue;
    }
    if (described.count(tracked.id) != 0) continue;  // its class is written already
    // Redefined: the old Method*s run on in the frames that hold them (their records stand until
    // the memory is reused); the class is described as it is now, and what is new in it written.
    // Nothing in it appeared before the last sweep, nor before the old version was recorded.
    ClassMethods redefined;
    if (!source.DescribeClassOf(tracked.id, &redefined)) {
      stats_.method_table_methods_lost.Add();
      continue;
    }
    stats_.method_table_methods_lost.Add(redefined.unreadable);
    uint64_t class_id = 0;
    for (const ClassMethods::Method& m : redefined.methods) {
      described.insert(m.id);
      const auto at = tracked_.find(m.method);
      if (at != tracked_.end() && at->second.id == m.id) continue;  // unchanged
      uint64_t since = std::max(previous, tracked.timestamp);
      if (at != tracked_.end()) since = std::max(since, at->second.timestamp);
      if (Write(since + 1, redefined, m, jitdump::kMethodRedefined, &class_id)) {
        stats_.method_table_redefined.Add();
      } else {
        stats_.method_table_methods_lost.Add();
      }
    }
  }
  stats_.method_table_sweeps.Add();
  stats_.method_table_sweep_ns.Add(MonotonicNanos() - start);
}

jitdump::Status MethodTableWriter::Flush() {
  if (pending_.empty()) return jitdump::Status::Ok();
  const jitdump::Status status = file_.Append(pending_);
  if (status.ok()) {
    counts_.methods += pending_methods_;
    stats_.method_table_methods.Add(pending_methods_);
    stats_.method_table_bytes.Add(pending_.size());
  } else {
    // The file is cut back to its last whole record: these methods are not in it.
    stats_.method_table_methods_lost.Add(pending_methods_);
  }
  pending_.clear();
  pending_methods_ = 0;
  return status;
}

jitdump::Status MethodTableWriter::Close(uint64_t now) {
  if (!file_.is_open()) return jitdump::Status::Ok();
  const jitdump::Status flushed = Flush();
  counts_.methods_lost = stats_.method_table_methods_lost.Get();
  const jitdump::Status closed = file_.Close(now, counts_);
  tracked_.clear();
  return flushed.ok() ? closed : flushed;
}

void MethodTableWriter::Discard() {
  pending_.clear();
  file_.Discard();
}

}  // namespace jitdump_agent
