// The one thread that owns a session's output files. It takes the code events the callbacks
// queued, resolves the deferred ones (through the lifecycle's LoadResolver, while attached),
// passes each through the intrinsic stage (intrinsic_stage.h: a method-handle intrinsic may wait
// there for the JVM's code list to name it), skips exact duplicates (live_code.h), moves load
// timestamps back where that is provably safe (code_history.h), assigns code_index in file order,
// encodes each load's records once (dump_batch.h) and writes them whole up to max_size=, keeps
// the perf map, and serves the
// lifecycle's requests to attach to the JVM and detach again. It notices when the session
// should end on its own (stop_after= has passed, or the dump was deleted under it) and asks the
// agent to stop it. When it ends it closes every descriptor it holds and frees what it kept.
// JVM threads never wait for it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <optional>

#include "agent/core/code_history.h"
#include "agent/core/dump_batch.h"
#include "agent/core/intrinsic_stage.h"
#include "agent/core/lifecycle.h"
#include "agent/core/live_code.h"
#include "agent/core/log.h"
#include "agent/core/method_table_writer.h"
#include "agent/core/options.h"
#include "agent/core/perf_map_file.h"
#include "agent/core/record_queue.h"
#include "agent/core/stats.h"
#include "jitdump/write/dump_file.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {

// The words for one directory's messages.
struct DirectoryUse {
  const char* what;     // "output directory": "refusing output directory DIR: ..."
  const char* failed;   // "cannot create output directory": "... DIR (mkdir: ...); "
  const char* fix;      // after a failure to create or open it
  const char* instead;  // after a refusal: what happens now
};
// Says in one line (at `level`) why the directory at `path` cannot hold output: refused as one
// other users could tamper with (owner, mode and the fix), or the failure to create or open it.
// For the stats directory too (agent.cc).
void LogUnusableDirectory(LogLevel level, const jitdump::HeldDirectory& dir, const std::string& path,
                          const jitdump::Status& status, const DirectoryUse& use);

class Writer {
 public:
  Writer(const Options& options, Stats& stats, RecordQueue& queue, Lifecycle& lifecycle);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Before Open: also write the method table beside the dump (interp=on), its classes and
  // methods described by `source` while the writer is attached to the JVM.
  void EnableMethodTable(const InterpreterLayout& layout, std::string jvm_version, MethodSource* source);
  // Creates the dump (and the perf map and the method table when asked). Returns false, after
  // logging why, when the dump cannot be created; the agent then runs without output.
  bool Open(uint32_t pid, uint64_t start_time);
  // Removes what Open created (the writer thread could not be started): no header-only dump.
  void Abandon();
  // Before Start. `stop_due`, on the writer thread, when the session should end on its own:
  // true when the agent has begun the stop (the writer then drains, closes and ends), false to
  // be asked again at a later poll. `ended`, on the writer thread after it closed everything,
  // as the thread's last act: it may free this writer (DetachThread first).
  void SetHooks(std::function<bool(StopCause)> stop_due, std::function<void()> ended);
  // Before Start: the session ends on its own at this CLOCK_MONOTONIC time (stop_after=).
  void SetDeadline(uint64_t monotonic_ns) { deadline_ns_ = monotonic_ns; }
  // Starts the writer thread; false (nothing started) when the thread cannot be created.
  bool Start();
  // Drains everything queued so far, writes JIT_CODE_CLOSE (and fsyncs with `sync`: the session
  // stops while the JVM lives) and closes the files. Waits at most `timeout_ms` for the writer
  // thread; if the disk hangs, the JVM goes on anyway (the thread is left to finish on its own).
  void Finish(uint64_t close_time, uint32_t timeout_ms, bool sync = false);
  // From the `ended` hook, on the writer thread itself: nobody will join it.
  void DetachThread();
  // Whether the dump has been deleted (its link count is 0): checked now, on any thread.
  bool DumpDeleted() const;

  const std::string& dump_path() const { return dump_path_; }
  const std::string& perfmap_path() const { return perf_map_.path(); }
  const std::string& method_table_path() const { return method_table_.path(); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // The dump's size now (header and whole records); writer thread, or once finished.
  uint64_t dump_size() const { return dump_.size(); }
  // The effective max_size= (0: none).
  uint64_t max_size() const { return max_size_; }
  void SetMaxSize(uint64_t bytes) { max_size_ = bytes; }

  // Processes whatever is queued now (the writer thread's loop body; tests call it directly).
  size_t ProcessAvailable();

 private:
  void Run();
  // The writer's side of a session's end: drains, waits for callbacks in flight, detaches,
  // closes the files, frees what it kept.
  void Close();
  // Why the session should end on its own now, if it should (polled by Run).
  std::optional<StopCause> StopDue();
  // How long Run may sleep now: `wait_ms`, but never past the deadline.
  uint32_t SleepMs(uint32_t wait_ms) const;
  // Frees the writer's own structures once the session is over (a stopped agent keeps nothing).
  void ReleaseMemory();
  // The names of a deferred load, from the resolver; false (counted) when there are none.
  bool ResolveDeferred(const CodeEvent& load, LoadNames* names);
  // Writes (Emit) a load the intrinsic stage hands on; counts it lost if that throws.
  void EmitHeld(CodeEvent* event, const LoadNames& names);
  // One warning at the end when loads were written without names (stats: unnamed_loads).
  void ReportUnnamed();
  // One popped event: written, counted as a duplicate or lost, or applied (an unload). Frees it
  // unless the batch took it; may throw (the caller counts the record and goes on).
  void Process(CodeEvent* event);
  class EventGuard;
  // Writes a named load unless it duplicates one written (a replay).
  void Emit(EventGuard& guard, const LoadNames& names);
  void AddLoad(EventGuard& guard, const LoadNames& names);
  // The load's timestamp, moved back to just after the last event that touched its range.
  uint64_t Backdate(const CodeEvent& load);
  void ApplyUnload(const CodeEvent& unload);
  void WritePending();
  void CompactPerfMap();
  // A prepared class, described into the method table (its pin released).
  void AddPreparedClass(const CodeEvent& event);
  // The method table's own work while attached: its first pass over the loaded classes, the
  // sweep when due (or now: `final_sweep`, before the writer detaches), appending what was
  // encoded.
  void ServeMethodTable(bool final_sweep = false);

  const Options& options_;
  Stats& stats_;
  RecordQueue& queue_;
  Lifecycle& lifecycle_;
  jitdump::DumpFile dump_;
  PerfMapFile perf_map_;
  std::string dump_path_;
  std::string shown_dump_path_;      // dump_path_ and the perf map's path as messages show them
  std::string shown_perf_map_path_;
  uint32_t pid_ = 0;
  uint64_t start_time_ = 0;
  uint64_t next_code_index_ = 1;
  CodeHistory history_;
  LiveCode live_;
  DumpBatch batch_;                  // the records of pending_
  std::vector<CodeEvent*> pending_;  // loads in batch_, freed once written
  // The method table (interp=on): its writer, the JVM's side, and whether its first pass over
  // the classes loaded before it has run.
  MethodTableWriter method_table_;
  MethodSource* method_source_ = nullptr;
  InterpreterLayout table_layout_;
  std::string jvm_version_;
  bool table_listed_ = false;
  const std::function<void()> drain_;
  std::function<bool(StopCause)> stop_due_;
  std::function<void()> ended_;
  uint64_t deadline_ns_ = 0;       // stop_after=, CLOCK_MONOTONIC; 0: none
  uint64_t max_size_ = 0;          // max_size=; 0: none
  bool capped_ = false;            // max_size= reached: later loads are counted, not written
  bool dump_deleted_ = false;      // its link count was 0 (said once)
  uint64_t last_link_check_ns_ = 0;
  bool sync_on_close_ = false;
  // One warning per session for each condition that could repeat per record.
  WarnOnce write_warning_;
  WarnOnce perfmap_warning_;
  WarnOnce failure_warning_;
  WarnOnce cap_warning_;
  WarnOnce table_warning_;
  // Method-handle intrinsics waiting for a code-list read (after failure_warning_, which it uses).
  IntrinsicStage intrinsics_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  bool stop_requested_ = false;
  uint64_t close_time_ = 0;
  std::atomic<bool> finished_{false};
};

}  // namespace jitdump_agent
