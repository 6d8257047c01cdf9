// The stage between the queue and the writer for method-handle intrinsics. JVMTI names every
// one of them alike; the JVM's code list tells them apart (intrinsic_names.h), but a read of it
// is budgeted, so a load whose name is still the placeholder may wait here for the next read
// the budget allows. The writer hands every popped load to Hold() and writes only what comes out
// ready: now (Hold returns false) or later, through the `ready` callback (Settle, Unload).
// Writer thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "agent/core/code_event.h"
#include "agent/core/intrinsic_names.h"
#include "agent/core/lifecycle.h"
#include "agent/core/log.h"
#include "agent/core/record_queue.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

class IntrinsicStage {
 public:
  // Held loads that may wait for a read; with more the oldest is written unnamed.
  static constexpr size_t kMaxHeld = 256;
  // Takes the event (and frees it) with its final names.
  using Ready = std::function<void(CodeEvent*, const LoadNames&)>;

  IntrinsicStage(NameStyle style, Stats& stats, Lifecycle& lifecycle, WarnOnce& failure_warning, Ready ready);
  IntrinsicStage(const IntrinsicStage&) = delete;
  IntrinsicStage& operator=(const IntrinsicStage&) = delete;

  // A load from the queue with its `names`. False: `names` are final, write it now (the usual
  // case: no placeholder, or a read named it). True: the stage kept `load` (the caller lets go of
  // it) and hands it to `ready` once named, or unnamed when it cannot wait any longer.
  bool Hold(CodeEvent* load, LoadNames* names);
  // Names what is held if a read fits the budget now, or always with `force` (the session's end:
  // IntrinsicNamer's forced read), and hands it on.
  void Settle(bool force);
  // The code at `code_addr` is being unloaded: a load held for it goes on unnamed first (no list
  // names it any more).
  void Unload(uint64_t code_addr);
  // Frees whatever is still held (none after a Settle(true)) and the stage's memory.
  void Release(RecordQueue& queue);

 private:
  // The placeholder replaced from the JVM's code list, or counted unnamed; false when no read
  // fits the budget now (and not `force`).
  bool Name(const CodeEvent& load, bool force, LoadNames* names);
  LoadNames Placeholder() const;
  void PassUnnamed(std::vector<CodeEvent*>::iterator held);

  const IntrinsicName unknown_;
  Stats& stats_;
  Lifecycle& lifecycle_;
  WarnOnce& failure_warning_;
  const Ready ready_;
  // Oldest first, at most kMaxHeld (capacity reserved: holding never allocates).
  std::vector<CodeEvent*> held_;
};

}  // namespace jitdump_agent
