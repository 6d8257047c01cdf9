// The writer thread (writer.h).
#include "agent/core/writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>

#include "agent/core/clock.h"
#include "agent/core/log.h"
#include "agent/core/method_cache.h"
#include "jitdump/format/dump_format.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {
namespace {

constexpr uint32_t kMaxIdleDoublings = 3;  // the writer's idle wait: flush_ms up to 8 x flush_ms

// How often the writer checks that its dump still has a name (one fstat).
constexpr uint64_t kLinkCheckNs = 100'000'000;
// How long the writer's end waits for callbacks still in flight to queue their events (its own
// wait: the JVM waits for the writer within its budget, wait_budget.h).
constexpr uint32_t kEndWaitMs = 1000;

// A load that writing it threw for: counted lost by cause (no memory, or anything else).
void CountLostLoad(Stats& stats, WarnOnce& once, const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    stats.lost_allocation.Add();
  } catch (...) {
    stats.lost_writer_error.Add();
  }
  WarnFailure(once, "writing a record", error);
}

// perf's default layout: <base>/.debug/jit/java-jit-YYYYMMDD.XXXXXX, base = $JITDUMPDIR or $HOME.
bool MakeDefaultDirectory(std::string* dir) {
  const char* base = getenv("JITDUMPDIR");
  if (base == nullptr || *base == '\0') base = getenv("HOME");
  if (base == nullptr || *base == '\0') base = "/tmp";
  const std::string jit_dir = std::string(base) + "/.debug/jit";
  const jitdump::Status status = jitdump::MakeDirectories(jit_dir, 0755);
  if (!status.ok()) {
    Log(LogLevel::kError, "cannot create %s (%s); set dir= to a writable directory", PrintablePath(jit_dir).c_str(),
        status.ToString().c_str());
    return false;
  }
  char date[16] = "00000000";
  const time_t now = ::time(nullptr);
  struct tm local {};
  if (::localtime_r(&now, &local) != nullptr) ::strftime(date, sizeof date, "%Y%m%d", &local);
  std::string templ = jit_dir + "/java-jit-" + date + ".XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    Log(LogLevel::kError, "cannot create a directory in %s (%s); set dir= to a writable directory",
        PrintablePath(jit_dir).c_str(),
        std::strerror(errno));
    return false;
  }
  *dir = templ;
  return true;
}


}  // namespace

void LogUnusableDirectory(LogLevel level, const jitdump::HeldDirectory& dir, const std::string& path,
                          const jitdump::Status& status, const DirectoryUse& use) {
  if (status.err_no() == EPERM && dir.refused_mode() != 0) {
    const bool foreign = dir.refused_owner() != ::geteuid() && dir.refused_owner() != 0;
    Log(level,
        "refusing %s %s: %s (owner uid %u, mode %04o); another user could rename or replace the agent's files "
        "there. %s; %s",
        use.what, PrintablePath(path).c_str(), status.operation(), static_cast<unsigned>(dir.refused_owner()),
        static_cast<unsigned>(dir.refused_mode()),
        foreign ? "Use a directory owned by this user or root"
                : "Use a directory only this user or root can write to, or make it sticky (chmod +t)",
        use.instead);
    return;
  }
  Log(level, "%s %s (%s); %s", use.failed, PrintablePath(path).c_str(), status.ToString().c_str(), use.fix);
}

namespace {

// CLOCK_REALTIME, as file modification times are kept.
int64_t RealtimeNanos() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Runs `create(dir)`; when the name is held by another live process of this user with the same
// pid (two JVMs that are each pid 1 in their own container, sharing a volume: issue #13 item 4),
// tries again in a subdirectory jit-<pid>-2 ... jit-<pid>-9 of `dir` and says so. The file keeps
// its name: perf 6.1 accepts a dump only as jit-<pid>.dump (util/jitdump.c jit_detect), in any
// directory. On success `dir` is the directory the file went to.
template <typename Create>
jitdump::Status CreateAvoidingLiveFiles(jitdump::HeldDirectory& dir, uint32_t pid, const std::string& name,
                                        Create create) {
  jitdump::Status status = create(dir);
  if (status.ok() || status.err_no() != jitdump::kInUse) return status;
  for (int n = 2; n <= 9; ++n) {
    jitdump::HeldDirectory sub;
    const std::string sub_name = "jit-" + std::to_string(pid) + "-" + std::to_string(n);
    const jitdump::Status opened = sub.OpenChild(dir, sub_name, 0755);
    if (!opened.ok()) continue;  // another user's, say: try the next
    const jitdump::Status created = create(sub);
    if (created.ok()) {
      Log(LogLevel::kWarn,
          "%s is in use by another live process with the same pid (a JVM in another pid namespace sharing "
          "this directory?); writing %s instead",
          PrintablePath(dir.path() + "/" + name).c_str(), PrintablePath(sub.path() + "/" + name).c_str());
      dir = std::move(sub);
      return created;
    }
    if (created.err_no() != jitdump::kInUse) return created;
  }
  return status;
}

}  // namespace

// Owns one popped event until the batch takes it: frees it on every other path out of
// Writer::Process, an exception included.
class Writer::EventGuard {
 public:
  EventGuard(RecordQueue& queue, CodeEvent* event) : queue_(queue), event_(event) {}
  ~EventGuard() { queue_.Free(event_); }
  EventGuard(const EventGuard&) = delete;
  EventGuard& operator=(const EventGuard&) = delete;
  CodeEvent* get() const { return event_; }
  CodeEvent* release() {
    CodeEvent* event = event_;
    event_ = nullptr;
    return event;
  }

 private:
  RecordQueue& queue_;
  CodeEvent* event_;
};

Writer::Writer(const Options& options, Stats& stats, RecordQueue& queue, Lifecycle& lifecycle)
    : options_(options),
      stats_(stats),
      queue_(queue),
      lifecycle_(lifecycle),
      method_table_(stats),
      drain_([this] {
        while (ProcessAvailable() != 0) {
        }
        // Before detaching, and at exit: one read names every intrinsic still waiting, and one
        // last sweep records the methods redefined since the last (the JVM still answers).
        intrinsics_.Settle(/*force=*/true);
        try {
          ServeMethodTable(/*final_sweep=*/true);
        } catch (...) {
          WarnFailure(failure_warning_, "writing the method table", std::current_exception());
        }
        WritePending();
      }),
      intrinsics_(options.names, stats, lifecycle, failure_warning_,
                  [this](CodeEvent* load, const LoadNames& names) { EmitHeld(load, names); }) {
  // From JVM threads: no lock, a missed wake-up costs at most one poll interval.
  queue_.SetPressureHandler([](void* self) { static_cast<Writer*>(self)->wake_.notify_one(); }, this);
  // From the agent's lifecycle (VMInit, VMDeath): under the lock, so the loop cannot miss it.
  lifecycle_.SetWaker(this, [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  });
  pending_.reserve(DumpBatch::kMaxLoads);
}

void Writer::EnableMethodTable(const InterpreterLayout& layout, std::string jvm_version, MethodSource* source) {
  table_layout_ = layout;
  jvm_version_ = std::move(jvm_version);
  method_source_ = source;
}

bool Writer::Open(uint32_t pid, uint64_t start_time) {
  pid_ = pid;
  start_time_ = start_time;
  std::string dir = options_.dir;
  if (dir.empty() && !MakeDefaultDirectory(&dir)) return false;
  jitdump::HeldDirectory held;
  jitdump::Status status = held.Open(dir, 0755);
  if (!status.ok()) {
    LogUnusableDirectory(LogLevel::kError, held, dir, status,
                         {"output directory", "cannot create output directory",
                          "fix its permissions or choose another dir=", "the JVM runs on without the agent"});
    return false;
  }
  // A file of ours written from now on is another live process's, never a stale leftover.
  const jitdump::CreateRules rules{O_RDWR, static_cast<mode_t>(options_.mode), RealtimeNanos()};
  const std::string dump_name = "jit-" + std::to_string(pid) + ".dump";
  jitdump::FileHeaderFields header;
  header.elf_mach = jitdump::CurrentElfMachine();
  header.pid = pid;
  header.timestamp = start_time;
  status = CreateAvoidingLiveFiles(held, pid, dump_name, [&](const jitdump::HeldDirectory& where) {
    return dump_.Create(where, dump_name, rules, header);
  });
  dump_path_ = held.path() + "/" + dump_name;
  if (!status.ok()) {
    Log(LogLevel::kError, "cannot create %s (%s); the JVM runs on without the agent. Choose a writable dir=",
        PrintablePath(dump_path_).c_str(), status.ToString().c_str());
    return false;
  }
  if (method_source_ != nullptr) {
    // Beside the dump, under a name perf never reads (method_table_format.h).
    const std::string table_name = dump_name + jitdump::kMethodTableSuffix;
    status = method_table_.Open(held, table_name, rules, pid, start_time, table_layout_, jvm_version_);
    if (status.ok()) {
      stats_.method_table_state.store(static_cast<int>(Stats::MethodTableState::kOn), std::memory_order_relaxed);
    } else {
      stats_.method_table_state.store(static_cast<int>(Stats::MethodTableState::kFailed), std::memory_order_relaxed);
      Log(LogLevel::kWarn, "cannot create %s (%s); interpreted frames will not be named",
          PrintablePath(held.path() + "/" + table_name).c_str(), status.ToString().c_str());
    }
  }
  status = dump_.MapMarker();
  if (!status.ok()) {
    Log(LogLevel::kWarn,
        "cannot map %s executable (%s): perf inject will not find the dump. Is the directory on a noexec "
        "mount? Choose another dir=",
        PrintablePath(dump_path_).c_str(), status.ToString().c_str());
  }
  if (options_.perfmap) {
    jitdump::HeldDirectory map_dir;
    status = map_dir.Open(options_.perfmap_dir, 0755);
    if (!status.ok()) {
      LogUnusableDirectory(LogLevel::kWarn, map_dir, options_.perfmap_dir, status,
                           {"perf map directory", "cannot create perf map in", "continuing with the jitdump only",
                            "continuing with the jitdump only"});
    } else {
      const std::string map_name = "perf-" + std::to_string(pid) + ".map";
      status = CreateAvoidingLiveFiles(map_dir, pid, map_name, [&](const jitdump::HeldDirectory& where) {
        return perf_map_.Open(where.Duplicate(), map_name, rules);
      });
      if (!status.ok()) {
        Log(LogLevel::kWarn, "cannot create perf map in %s (%s); continuing with the jitdump only",
            PrintablePath(map_dir.path()).c_str(), status.ToString().c_str());
      }
    }
  }
  // Made once: the writer's messages must not allocate (they also report a lack of memory).
  shown_dump_path_ = PrintablePath(dump_path_);
  shown_perf_map_path_ = PrintablePath(perf_map_.path());
  Log(LogLevel::kInfo, "writing %s", shown_dump_path_.c_str());
  return true;
}

void Writer::Abandon() {
  method_table_.Discard();
  perf_map_.Discard();
  dump_.Discard();
}

Writer::~Writer() {
  lifecycle_.ClearWaker(this);
  // A thread left running (a hung disk outlived every wait) must not take the JVM down with it.
  if (thread_.joinable()) thread_.detach();
}

void Writer::SetHooks(std::function<bool(StopCause)> stop_due, std::function<void()> ended) {
  stop_due_ = std::move(stop_due);
  ended_ = std::move(ended);
}

bool Writer::Start() {
  try {
    thread_ = std::thread([this] {
      Run();
      // The thread's last act; it may free this writer, so it runs from a copy and nothing
      // here touches `this` afterwards.
      try {
        const std::function<void()> ended = ended_;
        if (ended) ended();
      } catch (...) {  // (the hook's two pointers fit std::function's own storage: no allocation)
      }
    });
    return true;
  } catch (...) {  // std::system_error: pthread_create refused (EAGAIN: no memory or thread limit)
    return false;
  }
}

void Writer::DetachThread() {
  if (thread_.joinable() && thread_.get_id() == std::this_thread::get_id()) thread_.detach();
}

bool Writer::DumpDeleted() const {
  struct stat st {};
  return dump_.is_open() && ::fstat(dump_.fd(), &st) == 0 && st.st_nlink == 0;
}

bool Writer::ResolveDeferred(const CodeEvent& load, LoadNames* names) {
  LoadResolver* resolver = lifecycle_.resolver();
  if (resolver == nullptr || !lifecycle_.attached()) {  // the lifecycle never lets this happen
    stats_.lost_unresolved.Add();
    return false;
  }
  const Lifecycle::JvmScope jvm = lifecycle_.EnterJvm();
  if (!jvm.live()) {
    // VMDeath returned before this load was resolved (it waited 2 s for the writer): the JVM
    // may be gone, so no JVMTI or JNI call (the class pin stays, as the JVM exits anyway).
    names->name = names->perf_map_name = kUnknownJavaMethod;
    stats_.unnamed_loads.Add();
    stats_.unnamed_after_vm_death.Add();
    return true;
  }
  const uint64_t start = MonotonicNanos();
  const bool resolved = resolver->Resolve(load, names);
  stats_.resolve_latency.Record(MonotonicNanos() - start);
  return resolved;
}

void Writer::EmitHeld(CodeEvent* event, const LoadNames& names) {
  EventGuard guard(queue_, event);
  try {
    Emit(guard, names);
  } catch (...) {
    CountLostLoad(stats_, failure_warning_, std::current_exception());
  }
}

void Writer::ReportUnnamed() {
  const uint64_t unnamed = stats_.unnamed_loads.Get();
  if (unnamed == 0) return;
  const uint64_t dying = stats_.unnamed_after_vm_death.Get();
  if (dying == unnamed) {
    Log(LogLevel::kWarn, "%llu compiled method(s) posted after VM death written as [unknown Java method]: the "
        "JVM no longer answers name lookups then (stats: unnamed_loads.after_vm_death)",
        static_cast<unsigned long long>(unnamed));
  } else {
    Log(LogLevel::kWarn, "%llu compiled method(s) written as [unknown Java method] (%llu posted after VM death); "
        "log=info shows the JVMTI error (stats: unnamed_loads)",
        static_cast<unsigned long long>(unnamed), static_cast<unsigned long long>(dying));
  }
}

std::optional<StopCause> Writer::StopDue() {
  const uint64_t now = MonotonicNanos();
  if (deadline_ns_ != 0 && now >= deadline_ns_) return StopCause::kStopAfter;
  if (!dump_deleted_ && now - last_link_check_ns_ >= kLinkCheckNs) {
    last_link_check_ns_ = now;
    if (DumpDeleted()) {
      dump_deleted_ = true;
      stats_.dump_deleted.Add();
      Log(LogLevel::kWarn,
          "%s was deleted while the agent wrote it (its link count is 0): stopping this session, since nothing "
          "can read what it would add; attach again (perf-java -p, jitdump-attach) to start a new one",
          shown_dump_path_.c_str());
    }
  }
  if (dump_deleted_) return StopCause::kDumpDeleted;
  return std::nullopt;
}

uint32_t Writer::SleepMs(uint32_t wait_ms) const {
  if (deadline_ns_ == 0) return wait_ms;
  const uint64_t now = MonotonicNanos();
  // Past it, the stop is asked for at every poll (a transition under way may have put it off):
  // at the usual interval, never in a busy loop.
  if (now >= deadline_ns_) return std::min(wait_ms, options_.flush_ms);
  const uint64_t left_ms = (deadline_ns_ - now + 999999) / 1000000;
  return static_cast<uint32_t>(std::min<uint64_t>(wait_ms, left_ms));
}

void Writer::Run() {
  ::pthread_setname_np(::pthread_self(), "jitdump-writer");  // for top -H and perf report --sort comm
  // Nothing thrown here may leave this thread (std::terminate would take the JVM down): each
  // record is guarded in Process, and each step of the loop and of the end (Close).
  std::unique_lock<std::mutex> lock(mutex_);
  uint32_t empty_polls = 0;  // polls in a row that found nothing queued
  bool ending = false;       // the session ends on its own (stop_due_ began the stop)
  while (!stop_requested_) {
    lock.unlock();
    bool waiting = false;
    size_t done = 0;
    try {
      waiting = lifecycle_.Serve(drain_);
      done = ProcessAvailable();
      if (const std::optional<StopCause> due = StopDue(); due && stop_due_) ending = stop_due_(*due);
    } catch (...) {
      WarnFailure(failure_warning_, "the writer's loop", std::current_exception());
    }
    lock.lock();
    if (ending) break;
    if (done != 0) empty_polls = 0;
    if (stop_requested_ || done != 0) continue;
    if (waiting) {
      wake_.wait_for(lock, std::chrono::milliseconds(1));  // for a deferring callback to queue its load
    } else if (!lifecycle_.HasRequest()) {
      // Every sleep and wake-up costs the writer CPU (measured: tens of µs each on these VMs,
      // ~40% of its samples on javac at one per 10 ms). So it sleeps flush_ms (100 ms) unless
      // 256 KiB pending wake it sooner (record_queue.cc), and a poll that found nothing doubles
      // the next wait, up to 8 intervals: a JVM that compiles nothing costs a wake-up per 800 ms,
      // and the first load after a pause waits at most that long in the queue (JVM threads never
      // wait for the writer; a full queue wakes it at once). Never past stop_after's deadline.
      const uint32_t wait_ms = options_.flush_ms << std::min<uint32_t>(empty_polls, kMaxIdleDoublings);
      ++empty_polls;
      wake_.wait_for(lock, std::chrono::milliseconds(SleepMs(wait_ms)));
    }
  }
  if (ending) {
    close_time_ = MonotonicNanos();
    sync_on_close_ = true;
  }
  lock.unlock();
  Close();
  lock.lock();
  finished_.store(true, std::memory_order_release);
  done_cv_.notify_all();
}

void Writer::Close() {
  try {
    drain_();
    // Callbacks that took their ticket before the session stopped may still be on their way to
    // the queue: wait for them (callbacks never wait for the writer), then drain again.
    (void)lifecycle_.AwaitIdle(kEndWaitMs);
    drain_();
  } catch (...) {
    WarnFailure(failure_warning_, "draining the queue", std::current_exception());
  }
  try {
    lifecycle_.DetachAtExit(drain_, kEndWaitMs);
  } catch (...) {
    WarnFailure(failure_warning_, "detaching from the JVM", std::current_exception());
  }
  if (perf_map_.is_open()) {
    if (!dump_deleted_) CompactPerfMap();  // a deleted dump's directory is usually gone with it
    perf_map_.Close();
  }
  ReportUnnamed();
  const jitdump::Status table_status = method_table_.Close(close_time_ != 0 ? close_time_ : MonotonicNanos());
  if (!table_status.ok() && table_warning_.First()) {
    Log(LogLevel::kWarn, "closing %s: %s: %s", PrintablePath(method_table_.path()).c_str(), table_status.operation(),
        std::strerror(table_status.err_no()));
  }
  const jitdump::Status status = dump_.Close(close_time_ != 0 ? close_time_ : MonotonicNanos(), sync_on_close_);
  // A failing disk was reported once already when writing records failed: the close record failing on
  // the same full disk is no news (the dump stays valid without it: perf reads to the last whole record).
  if (!status.ok() && write_warning_.First()) {
    Log(LogLevel::kWarn, "closing %s: %s: %s", shown_dump_path_.c_str(), status.operation(),
        std::strerror(status.err_no()));
  }
  try {
    ReleaseMemory();
  } catch (...) {
  }
  stats_.writer_cpu_ns.Add(ThreadCpuNanos());
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) == 0) {
    stats_.writer_sys_ns.Add(static_cast<uint64_t>(usage.ru_stime.tv_sec) * 1000000000ull +
                             static_cast<uint64_t>(usage.ru_stime.tv_usec) * 1000ull);
    stats_.writer_sleeps.Add(static_cast<uint64_t>(usage.ru_nvcsw));
  }
}

void Writer::ReleaseMemory() {
  // Each high-water mark is in the stats already (taken as it grew).
  live_ = LiveCode();
  history_ = CodeHistory();
  batch_.Release();
  std::vector<CodeEvent*>().swap(pending_);
  intrinsics_.Release(queue_);
  queue_.ReleasePool();
}

void Writer::Finish(uint64_t close_time, uint32_t timeout_ms, bool sync) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable()) return;
  if (!stop_requested_ && !finished_.load(std::memory_order_acquire)) {
    close_time_ = close_time;
    sync_on_close_ = sync;
  }
  stop_requested_ = true;
  wake_.notify_all();
  const bool done = done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                      [this] { return finished_.load(std::memory_order_acquire); });
  lock.unlock();
  if (done) {
    thread_.join();
  } else {
    Log(LogLevel::kWarn,
        "the writer did not finish within %u ms (is the disk hung?); %s lacks the records it still held, "
        "counted as lost (writer_stalled)",
        timeout_ms, PrintablePath(dump_path_).c_str());
    thread_.detach();  // its session is then never freed, so the thread may finish safely later
  }
}

uint64_t Writer::Backdate(const CodeEvent& load) {
  const uint64_t previous = history_.Touch(load.code_addr, load.code_size, load.timestamp);
  stats_.code_history_high.Offer(history_.span_count());
  if (!options_.backdate) return load.timestamp;
  // Just after whatever last touched this range, never before the dump existed.
  const uint64_t earliest = std::max(previous + 1, start_time_);
  if (earliest >= load.timestamp) return load.timestamp;
  stats_.backdated_loads.Add();
  stats_.backdate_total_ns.Add(load.timestamp - earliest);
  return earliest;
}

void Writer::AddLoad(EventGuard& guard, const LoadNames& names) {
  const CodeEvent& load = *guard.get();
  if (capped_) {
    stats_.lost_size_cap.Add();
    return;
  }
  const uint64_t timestamp = Backdate(load);
  const DumpBatch::Mark mark = batch_.mark();
  if (!batch_.Add(load, names, pid_, timestamp, next_code_index_)) {
    stats_.lost_allocation.Add();  // a record past the format's 4 GiB limit
    return;
  }
  // max_size=: the dump, with what is pending and its closing record, never grows past it. The
  // first load that would is where the dump stops: later ones are counted, not written.
  if (max_size_ != 0 && dump_.size() + batch_.totals().bytes + sizeof(jitdump::CloseRecord) > max_size_) {
    batch_.Rollback(mark);
    capped_ = true;
    stats_.lost_size_cap.Add();
    if (cap_warning_.First()) {
      Log(LogLevel::kWarn,
          "%s reached max_size=%llu bytes: later code is counted as lost (stats: lost.size_cap), not written; "
          "the dump stays valid up to here. Raise max_size= or stop the agent (jitdump-attach PID stop)",
          shown_dump_path_.c_str(), static_cast<unsigned long long>(max_size_));
    }
    return;
  }
  // The batch holds the load now: from here on it is written (or counted by WritePending).
  ++next_code_index_;
  pending_.push_back(guard.release());  // capacity reserved: batch_.full() comes first
  try {
    perf_map_.MarkStale(live_.Occupy(load.code_addr, load.code_size, names.name, names.perf_map_name));
    stats_.live_code_high.Offer(live_.size());
    if (perf_map_.is_open()) perf_map_.Add(load.code_addr, load.code_size, names.perf_map_name);
  } catch (...) {
    // The dump has the load; the live set (duplicates, the perf map's compaction) misses it.
    WarnFailure(failure_warning_, "keeping the live code for the perf map", std::current_exception());
  }
  if (batch_.full()) WritePending();
}

void Writer::CompactPerfMap() {
  jitdump::Status status = jitdump::Status::Ok();
  try {
    status = perf_map_.Compact([this](const PerfMapFile::LiveVisitor& visit) { live_.ForEach(visit); },
                               MonotonicNanos());
  } catch (...) {
    WarnFailure(failure_warning_, "rewriting the perf map", std::current_exception());
    return;
  }
  if (status.ok()) {
    stats_.perfmap_compactions.Add();
  } else if (perfmap_warning_.First()) {
    Log(LogLevel::kWarn, "cannot rewrite %s (%s: %s)", shown_perf_map_path_.c_str(), status.operation(),
        std::strerror(status.err_no()));
  }
}

void Writer::ApplyUnload(const CodeEvent& unload) {
  // A load still waiting for its name at this address comes first, unnamed: no list names it now.
  intrinsics_.Unload(unload.code_addr);
  const std::optional<uint64_t> size = live_.Vacate(unload.code_addr);
  history_.Touch(unload.code_addr, size.value_or(1), unload.timestamp);
  if (size) perf_map_.MarkStale(1);
  // The writer's method cache follows the unloads as the callbacks' does (no JVMTI call).
  if (LoadResolver* resolver = lifecycle_.resolver()) resolver->Forget(unload.method);
}

void Writer::WritePending() {
  if (pending_.empty()) return;
  const DumpBatch::Totals& totals = batch_.totals();
  if (!dump_.is_open()) {
    stats_.lost_no_output.Add(totals.loads);
  } else {
    const std::span<const struct iovec> iov = batch_.Iovecs();  // capacity reserved: no allocation
    const jitdump::Status status = dump_.Append(iov.data(), static_cast<int>(iov.size()));
    if (status.ok()) {
      stats_.code_loads_written.Add(totals.loads);
      stats_.code_bytes_written.Add(totals.code_bytes);
      stats_.debug_info_written.Add(totals.debug_infos);
      stats_.debug_entries_written.Add(totals.debug_entries);
      stats_.inline_info_written.Add(totals.inline_infos);
      stats_.bytes_written.Add(totals.bytes);
    } else {
      stats_.lost_write_error.Add(totals.loads);
      if (write_warning_.First()) {  // one warning per run, not one per failed write
        Log(LogLevel::kWarn,
            "cannot write %s (%s: %s); records are counted as lost until writing works again (is the disk "
            "full?)",
            shown_dump_path_.c_str(), status.operation(), std::strerror(status.err_no()));
      }
    }
  }
  queue_.FreeAll(pending_);
  pending_.clear();
  batch_.Clear();
}

void Writer::AddPreparedClass(const CodeEvent& event) {
  const Lifecycle::JvmScope jvm = lifecycle_.EnterJvm();
  // The hand-off queues a class only while the writer is attached, and detaches it only once
  // the queue is drained; past VM death nothing may call into the JVM (the pin stays: the JVM
  // is exiting).
  if (method_source_ == nullptr || !lifecycle_.attached() || !jvm.live()) {
    stats_.method_table_classes_lost.Add();
    return;
  }
  ClassMethods klass;
  if (!method_source_->DescribePinned(event.pin, &klass)) {
    stats_.method_table_classes_lost.Add();
    return;
  }
  method_table_.AddClass(event.timestamp, klass);
}

void Writer::ServeMethodTable(bool final_sweep) {
  if (!method_table_.is_open() || method_source_ == nullptr || !lifecycle_.attached()) return;
  const Lifecycle::JvmScope jvm = lifecycle_.EnterJvm();
  if (!jvm.live()) return;
  if (!table_listed_) {
    // The classes prepared before the table began (or before the writer attached): their
    // methods may have run since the JVM started, so their records hold from the start.
    table_listed_ = true;
    method_source_->DescribeLoaded([this](const ClassMethods& klass) { method_table_.AddClass(0, klass); });
  }
  const uint64_t now = MonotonicNanos();
  if (final_sweep || method_table_.SweepDue(now)) method_table_.Sweep(now, *method_source_);
  if (method_source_->refuted()) {
    // Methods read through the VMStructs offsets disagree with JVMTI: the layout is not what
    // this agent knows. The table closes rather than name frames wrongly.
    Log(LogLevel::kWarn, "this JVM's methods are not laid out as the agent knows (their bytecode sizes disagree "
        "with JVMTI): %s is closed; interpreted frames will not be named",
        PrintablePath(method_table_.path()).c_str());
    method_table_.Discard();
    stats_.method_table_state.store(static_cast<int>(Stats::MethodTableState::kUnavailable),
                                    std::memory_order_relaxed);
    return;
  }
  const jitdump::Status status = method_table_.Flush();
  if (!status.ok() && table_warning_.First()) {
    Log(LogLevel::kWarn, "cannot write %s (%s: %s); methods are counted as lost until writing works again",
        PrintablePath(method_table_.path()).c_str(), status.operation(), std::strerror(status.err_no()));
  }
}

void Writer::Process(CodeEvent* event) {
  EventGuard guard(queue_, event);
  if (event->kind == EventKind::kUnload) {
    ApplyUnload(*event);
    return;
  }
  if (event->kind == EventKind::kClassPrepared) {
    AddPreparedClass(*event);
    return;
  }
  LoadNames names = event->names;
  const bool deferred = event->kind == EventKind::kCompiledLoad && !event->resolved;
  if (deferred && !ResolveDeferred(*event, &names)) return;  // counted by cause
  // A method-handle intrinsic may wait for the JVM's code list to name it (intrinsic_stage.h).
  if (intrinsics_.Hold(guard.get(), &names)) {
    guard.release();
    return;
  }
  Emit(guard, names);
}

void Writer::Emit(EventGuard& guard, const LoadNames& names) {
  if (live_.IsDuplicate(*guard.get(), names.name)) {
    stats_.duplicate_loads.Add();
    return;
  }
  AddLoad(guard, names);
}

size_t Writer::ProcessAvailable() {
  queue_.ArmWake();  // from now on, enough pending wakes the writer again
  size_t processed = 0;
  while (CodeEvent* event = queue_.Pop()) {
    ++processed;
    const bool load = event->kind != EventKind::kUnload && event->kind != EventKind::kClassPrepared;
    try {
      Process(event);
    } catch (...) {
      // The event is freed (Process's guard) and not in the batch: count the record, go on.
      if (load) {
        CountLostLoad(stats_, failure_warning_, std::current_exception());
      } else {
        WarnFailure(failure_warning_, "writing a record", std::current_exception());
      }
    }
  }
  intrinsics_.Settle(/*force=*/false);  // catches what it throws
  try {
    ServeMethodTable();
  } catch (...) {
    WarnFailure(failure_warning_, "writing the method table", std::current_exception());
  }
  WritePending();
  if (perf_map_.is_open()) {
    long lines = 0;
    try {
      lines = perf_map_.Flush();
    } catch (...) {
      WarnFailure(failure_warning_, "writing the perf map", std::current_exception());
    }
    if (lines > 0) stats_.perfmap_lines_written.Add(static_cast<uint64_t>(lines));
    if (lines < 0 && perfmap_warning_.First()) {
      const int err = errno;
      Log(LogLevel::kWarn, "cannot write %s (%s)", shown_perf_map_path_.c_str(), std::strerror(err));
    }
    if (perf_map_.WantsCompaction(MonotonicNanos())) CompactPerfMap();
  }
  return processed;
}

}  // namespace jitdump_agent
