// The one thread that owns the output files. It pops finished batches, assigns code_index in
// file order, moves load timestamps back where that is provably safe (see code_history.h),
// skips exact duplicates (GenerateEvents replays racing with live events), and writes whole
// records. JVM threads never wait for it.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/code_history.h"
#include "agent/options.h"
#include "agent/perf_map_file.h"
#include "agent/record_queue.h"
#include "agent/stats.h"
#include "jitdump/dump_file.h"

namespace jitdump_agent {

// Turns deferred loads (BatchKind::kDeferredLoad) into finished ones on the writer thread. The
// writer knows nothing of JVMTI: the agent's implementation (jvm_resolver.h) attaches the
// thread to the JVM, which JVMTI requires of its callers.
class LoadResolver {
 public:
  // On the writer thread, when BeginResolving asked for it. false: deferred loads cannot be
  // resolved here (the agent then keeps resolving inside the callbacks).
  virtual bool Attach() = 0;
  // The finished batch for a deferred one (allocated with RecordQueue::AllocateReplacing), or
  // nullptr when it could not be allocated (counted).
  virtual Batch* Resolve(Batch& deferred) = 0;
  // On the writer thread, after the last deferred load (EndResolving) or when the writer stops.
  virtual void Detach() = 0;

 protected:
  ~LoadResolver() = default;
};

class Writer {
 public:
  Writer(const Options& options, Stats& stats, RecordQueue& queue);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Creates the dump (and the perf map when asked). Returns false, after logging why, when the
  // dump cannot be created; the agent then runs without output.
  bool Open(uint32_t pid, uint64_t start_time);
  void Start();
  // Before Start: who resolves deferred loads. Without one they are counted as lost.
  void SetResolver(LoadResolver* resolver) { resolver_ = resolver; }
  // Asks the writer thread to attach its resolver (LoadResolver::Attach).
  void BeginResolving();
  // Asks the writer to resolve every deferred load queued so far, then detach its resolver.
  // Waits at most `timeout_ms`; false if the writer did not get there in time.
  bool EndResolving(uint32_t timeout_ms);
  // Drains everything queued so far, writes JIT_CODE_CLOSE and closes the files. Waits at most
  // `timeout_ms` for the writer thread; if the disk hangs, the JVM exits anyway.
  void Finish(uint64_t close_time, uint32_t timeout_ms);

  const std::string& dump_path() const { return dump_path_; }
  const std::string& perfmap_path() const { return perf_map_.path(); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

  // Processes whatever is queued now (the writer thread's loop body; tests call it directly).
  size_t ProcessAvailable();

 private:
  struct LiveCode {
    uint64_t size;
    std::string name;
  };

  void Run();
  // With mutex_ held (released while the resolver works): acts on Begin/EndResolving.
  void ServeResolverRequests(std::unique_lock<std::mutex>& lock);
  Batch* ResolveDeferred(Batch* deferred);
  bool IsDuplicate(const Batch& batch) const;
  bool OverlapsLiveCode(uint64_t start, uint64_t size) const;
  void PrepareLoad(Batch& batch);
  void WritePending();
  void ApplyUnload(const Batch& batch);
  void CompactPerfMap();

  const Options& options_;
  Stats& stats_;
  RecordQueue& queue_;
  jitdump::DumpFile dump_;
  PerfMapFile perf_map_;
  std::string dump_path_;
  uint64_t start_time_ = 0;
  uint64_t next_code_index_ = 1;
  CodeHistory history_;
  std::map<uint64_t, LiveCode> live_;  // code_addr -> what is there now
  std::vector<Batch*> pending_;        // batches whose records go into the next write
  std::vector<struct iovec> iov_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  bool stop_requested_ = false;
  uint64_t close_time_ = 0;
  std::atomic<bool> finished_{false};
  LoadResolver* resolver_ = nullptr;
  // Guarded by mutex_.
  bool attach_requested_ = false;
  bool end_requested_ = false;
  bool resolver_attached_ = false;
  bool resolving_ended_ = false;
};

}  // namespace jitdump_agent
