// IntrinsicStage (intrinsic_stage.h).
#include "agent/core/intrinsic_stage.h"

#include <exception>
#include <utility>

namespace jitdump_agent {

IntrinsicStage::IntrinsicStage(NameStyle style, Stats& stats, Lifecycle& lifecycle, WarnOnce& failure_warning,
                               Ready ready)
    : unknown_(UnknownIntrinsicName(style)),
      stats_(stats),
      lifecycle_(lifecycle),
      failure_warning_(failure_warning),
      ready_(std::move(ready)) {
  held_.reserve(kMaxHeld);
}

bool IntrinsicStage::Hold(CodeEvent* load, LoadNames* names) {
  if (!names->intrinsic_placeholder) return false;
  if (!names->lines.empty() || names->inline_info != nullptr) {
    // Native wrappers carry no lines; one that did could not wait, as its rows point into the
    // resolver's buffers.
    Name(*load, /*force=*/true, names);
    return false;
  }
  if (held_.size() >= kMaxHeld) PassUnnamed(held_.begin());
  // Behind a held one it waits too: no list read since named either.
  if (held_.empty() && Name(*load, /*force=*/false, names)) return false;
  held_.push_back(load);  // capacity reserved: no allocation
  stats_.held_intrinsics_high.Offer(held_.size());
  stats_.intrinsics_waited.Add();
  return true;
}

// Intrinsics are named on the writer only: a callback cannot read the JVM's code list. The list
// read now holds the nmethod unless it is gone again.
bool IntrinsicStage::Name(const CodeEvent& load, bool force, LoadNames* names) {
  LoadResolver::IntrinsicAnswer answer;
  LoadResolver* resolver = lifecycle_.resolver();
  if (resolver != nullptr && lifecycle_.attached()) {
    const Lifecycle::JvmScope jvm = lifecycle_.EnterJvm();
    if (jvm.live()) answer = resolver->NameIntrinsic(load.code_addr, load.timestamp, force);
  }
  if (answer.later) return false;
  if (answer.name == nullptr) {
    stats_.intrinsics_unnamed.Add();  // no code list here (intrinsics=off, not attached, JVM gone)
  } else {
    names->name = answer.name->name;
    names->perf_map_name = answer.name->perf_map_name();
  }
  names->intrinsic_placeholder = false;
  return true;
}

LoadNames IntrinsicStage::Placeholder() const {
  LoadNames names;
  names.name = unknown_.name;
  names.perf_map_name = unknown_.perf_map_name();
  return names;
}

void IntrinsicStage::Settle(bool force) {
  while (!held_.empty()) {
    CodeEvent* load = held_.front();
    LoadNames names = Placeholder();
    try {
      // One read serves them all: when the first has to wait, so do the rest.
      if (!Name(*load, force, &names)) return;
    } catch (...) {  // no memory for the list: written with the placeholder
      stats_.intrinsics_unnamed.Add();
      WarnFailure(failure_warning_, "naming a method-handle intrinsic", std::current_exception());
    }
    held_.erase(held_.begin());  // at most kMaxHeld pointers
    ready_(load, names);
  }
}

void IntrinsicStage::Unload(uint64_t code_addr) {
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if ((*it)->code_addr == code_addr) {
      PassUnnamed(it);
      return;
    }
  }
}

void IntrinsicStage::PassUnnamed(std::vector<CodeEvent*>::iterator held) {
  CodeEvent* load = *held;
  held_.erase(held);
  stats_.intrinsics_unnamed.Add();
  ready_(load, Placeholder());
}

void IntrinsicStage::Release(RecordQueue& queue) {
  for (CodeEvent* load : held_) queue.Free(load);  // never leak one
  std::vector<CodeEvent*>().swap(held_);
}

}  // namespace jitdump_agent
