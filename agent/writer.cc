#include "agent/writer.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "agent/clock.h"
#include "agent/log.h"
#include "agent/names.h"
#include "jitdump/encoder.h"
#include "jitdump/format.h"
#include "jitdump/safe_file.h"

namespace jitdump_agent {
namespace {

constexpr size_t kMaxBatchesPerWrite = 256;

WarnOnce g_write_warning;
WarnOnce g_perfmap_warning;

void PatchU64(uint8_t* at, uint64_t value) { std::memcpy(at, &value, sizeof value); }

// perf's default layout: <base>/.debug/jit/java-jit-YYYYMMDD.XXXXXX, base = $JITDUMPDIR or $HOME.
bool MakeDefaultDirectory(std::string* dir) {
  const char* base = getenv("JITDUMPDIR");
  if (base == nullptr || *base == '\0') base = getenv("HOME");
  if (base == nullptr || *base == '\0') base = "/tmp";
  const std::string jit_dir = std::string(base) + "/.debug/jit";
  const jitdump::Status status = jitdump::MakeDirectories(jit_dir, 0755);
  if (!status.ok()) {
    Log(LogLevel::kError, "cannot create %s (%s); set dir= to a writable directory", jit_dir.c_str(),
        status.ToString().c_str());
    return false;
  }
  char date[16] = "00000000";
  const time_t now = ::time(nullptr);
  struct tm local {};
  if (::localtime_r(&now, &local) != nullptr) ::strftime(date, sizeof date, "%Y%m%d", &local);
  std::string templ = jit_dir + "/java-jit-" + date + ".XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    Log(LogLevel::kError, "cannot create a directory in %s (%s); set dir= to a writable directory", jit_dir.c_str(),
        std::strerror(errno));
    return false;
  }
  *dir = templ;
  return true;
}

}  // namespace

Writer::Writer(const Options& options, Stats& stats, RecordQueue& queue)
    : options_(options), stats_(stats), queue_(queue) {
  queue_.SetPressureHandler([](void* self) { static_cast<Writer*>(self)->wake_.notify_one(); }, this);
  pending_.reserve(kMaxBatchesPerWrite);
  iov_.reserve(kMaxBatchesPerWrite * 4);
}

bool Writer::Open(uint32_t pid, uint64_t start_time) {
  start_time_ = start_time;
  std::string dir = options_.dir;
  if (dir.empty()) {
    if (!MakeDefaultDirectory(&dir)) return false;
  } else {
    const jitdump::Status status = jitdump::MakeDirectories(dir, 0755);
    if (!status.ok()) {
      Log(LogLevel::kError, "cannot create output directory %s (%s); fix its permissions or choose another dir=",
          dir.c_str(), status.ToString().c_str());
      return false;
    }
  }
  dump_path_ = dir + "/jit-" + std::to_string(pid) + ".dump";
  jitdump::FileHeaderFields header;
  header.elf_mach = jitdump::CurrentElfMachine();
  header.pid = pid;
  header.timestamp = start_time;
  jitdump::Status status = dump_.Create(dump_path_, static_cast<mode_t>(options_.mode), header);
  if (!status.ok()) {
    Log(LogLevel::kError, "cannot create %s (%s); the JVM runs on without the agent. Choose a writable dir=",
        dump_path_.c_str(), status.ToString().c_str());
    return false;
  }
  status = dump_.MapMarker();
  if (!status.ok()) {
    Log(LogLevel::kWarn,
        "cannot map %s executable (%s): perf inject will not find the dump. Is the directory on a noexec "
        "mount? Choose another dir=",
        dump_path_.c_str(), status.ToString().c_str());
  }
  if (options_.perfmap) {
    status = jitdump::MakeDirectories(options_.perfmap_dir, 0755);
    if (status.ok()) status = perf_map_.Open(options_.perfmap_dir, pid, static_cast<mode_t>(options_.mode));
    if (!status.ok()) {
      Log(LogLevel::kWarn, "cannot create perf map in %s (%s); continuing with the jitdump only",
          options_.perfmap_dir.c_str(), status.ToString().c_str());
    }
  }
  Log(LogLevel::kInfo, "writing %s", dump_path_.c_str());
  return true;
}

void Writer::Start() { thread_ = std::thread([this] { Run(); }); }

void Writer::BeginResolving() {
  std::lock_guard<std::mutex> lock(mutex_);
  attach_requested_ = true;
  wake_.notify_all();
}

bool Writer::EndResolving(uint32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable()) return true;
  end_requested_ = true;
  wake_.notify_all();
  return done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] {
    return resolving_ended_ || finished_.load(std::memory_order_acquire);
  });
}

void Writer::ServeResolverRequests(std::unique_lock<std::mutex>& lock) {
  const bool attach = attach_requested_ && !end_requested_ && !resolver_attached_ && resolver_ != nullptr;
  attach_requested_ = false;
  if (attach) {
    lock.unlock();
    const bool attached = resolver_->Attach();
    lock.lock();
    resolver_attached_ = attached;
  }
  if (end_requested_ && !resolving_ended_) {
    // Everything deferred was queued before EndResolving: resolve it while JVMTI still answers.
    lock.unlock();
    while (ProcessAvailable() != 0) {
    }
    if (resolver_attached_) resolver_->Detach();
    lock.lock();
    resolver_attached_ = false;
    resolving_ended_ = true;
    done_cv_.notify_all();
  }
}

Batch* Writer::ResolveDeferred(Batch* deferred) {
  Batch* resolved = nullptr;
  // The finished batch may outgrow the deferred one (file names, inline records) and must find
  // the difference within the budget: near it, write out what this thread holds first.
  if (!pending_.empty() && queue_.bytes_in_flight() + 2 * deferred->accounted > options_.budget_bytes) {
    WritePending();
  }
  if (resolver_ != nullptr) {
    const uint64_t start = MonotonicNanos();
    resolved = resolver_->Resolve(*deferred);
    stats_.resolve_latency.Record(MonotonicNanos() - start);
  } else {
    stats_.lost_unresolved.Add();
  }
  queue_.Free(deferred);
  return resolved;
}

void Writer::Run() {
  ::pthread_setname_np(::pthread_self(), "jitdump-writer");  // for top -H and perf report --sort comm
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_requested_) {
    ServeResolverRequests(lock);
    if (stop_requested_) break;
    lock.unlock();
    const size_t done = ProcessAvailable();
    lock.lock();
    const bool request_pending = attach_requested_ || (end_requested_ && !resolving_ended_);
    if (done == 0 && !stop_requested_ && !request_pending) {
      wake_.wait_for(lock, std::chrono::milliseconds(options_.flush_ms));
    }
  }
  lock.unlock();
  while (ProcessAvailable() != 0) {
  }
  lock.lock();
  const bool attached = resolver_attached_;
  resolver_attached_ = false;
  lock.unlock();
  if (attached) resolver_->Detach();  // an attached thread must never end attached
  if (perf_map_.is_open()) {
    CompactPerfMap();
    perf_map_.Close();
  }
  const jitdump::Status status = dump_.Close(close_time_);
  if (!status.ok()) Log(LogLevel::kWarn, "closing %s: %s", dump_path_.c_str(), status.ToString().c_str());
  stats_.writer_cpu_ns.Add(ThreadCpuNanos());
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) == 0) {
    stats_.writer_sys_ns.Add(static_cast<uint64_t>(usage.ru_stime.tv_sec) * 1000000000ull +
                             static_cast<uint64_t>(usage.ru_stime.tv_usec) * 1000ull);
  }
  lock.lock();
  finished_.store(true, std::memory_order_release);
  done_cv_.notify_all();
}

void Writer::Finish(uint64_t close_time, uint32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable()) return;
  close_time_ = close_time;
  stop_requested_ = true;
  wake_.notify_all();
  const bool done = done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                      [this] { return finished_.load(std::memory_order_acquire); });
  lock.unlock();
  if (done) {
    thread_.join();
  } else {
    Log(LogLevel::kWarn, "the writer did not finish within %u ms (slow disk?); %s may lack its last records",
        timeout_ms, dump_path_.c_str());
    thread_.detach();  // agent state is never freed, so the thread may finish safely later
  }
}

bool Writer::IsDuplicate(const Batch& batch) const {
  // A replayed stub (GenerateEvents at attach or VM death) is wanted only where nothing already
  // describes the code: the replay also lists enclosing containers ("adapters", "C1 temporary
  // CodeBuffer") and renames blobs, which would shadow the finer names written before.
  if (batch.replayed && batch.dynamic_code) {
    return IsScratchBuffer(batch.load_name()) || OverlapsLiveCode(batch.code_addr, batch.code_size);
  }
  const auto it = live_.find(batch.code_addr);
  return it != live_.end() && it->second.size == batch.code_size && it->second.name == batch.load_name();
}

bool Writer::OverlapsLiveCode(uint64_t start, uint64_t size) const {
  auto it = live_.upper_bound(start);
  if (it != live_.begin()) {
    const auto prev = std::prev(it);
    if (prev->first + prev->second.size > start) return true;
  }
  return it != live_.end() && it->first < start + size;
}

void Writer::PrepareLoad(Batch& batch) {
  uint8_t* payload = batch.payload();
  uint64_t timestamp = batch.timestamp;
  const uint64_t previous = history_.Touch(batch.code_addr, batch.code_size, batch.timestamp);
  if (options_.backdate) {
    // Just after whatever last touched this range, never before the dump existed.
    const uint64_t earliest = std::max(previous + 1, start_time_);
    if (earliest < timestamp) {
      stats_.backdated_loads.Add();
      stats_.backdate_total_ns.Add(timestamp - earliest);
      timestamp = earliest;
    }
  }
  for (uint8_t i = 0; i < batch.record_count; ++i) {
    PatchU64(payload + batch.record_offsets[i] + jitdump::kRecordTimestampOffset, timestamp);
  }
  const uint64_t code_index = next_code_index_++;
  PatchU64(payload + batch.load_offset + jitdump::kCodeLoadIndexOffset, code_index);
  // Whatever overlapped this range is gone now.
  auto it = live_.lower_bound(batch.code_addr);
  if (it != live_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second.size > batch.code_addr) it = prev;
  }
  while (it != live_.end() && it->first < batch.code_addr + batch.code_size) {
    it = live_.erase(it);
    perf_map_.MarkStale();
  }
  live_[batch.code_addr] = LiveCode{batch.code_size, batch.load_name()};
  if (perf_map_.is_open()) perf_map_.Add(batch.code_addr, batch.code_size, PerfMapName(batch.load_name()));
}

void Writer::CompactPerfMap() {
  const jitdump::Status status = perf_map_.Compact(
      [this](const PerfMapFile::LiveVisitor& visit) {
        for (const auto& [addr, code] : live_) visit(addr, code.size, PerfMapName(code.name));
      },
      MonotonicNanos());
  if (status.ok()) {
    stats_.perfmap_compactions.Add();
  } else if (g_perfmap_warning.First()) {
    Log(LogLevel::kWarn, "cannot rewrite %s (%s)", perf_map_.path().c_str(), status.ToString().c_str());
  }
}

void Writer::ApplyUnload(const Batch& batch) {
  const auto it = live_.find(batch.code_addr);
  const uint64_t size = it != live_.end() ? it->second.size : 1;
  history_.Touch(batch.code_addr, size, batch.timestamp);
  if (it != live_.end()) {
    live_.erase(it);
    perf_map_.MarkStale();
  }
}

void Writer::WritePending() {
  if (pending_.empty()) return;
  iov_.clear();
  uint64_t bytes = 0;
  for (Batch* batch : pending_) {
    iov_.push_back({batch->payload(), batch->payload_size});
    bytes += batch->payload_size;
  }
  const jitdump::Status status = dump_.Append(iov_.data(), static_cast<int>(iov_.size()));
  if (status.ok()) {
    for (const Batch* batch : pending_) {
      stats_.code_loads_written.Add();
      stats_.code_bytes_written.Add(batch->code_size);
      if (batch->has_debug_info) {
        stats_.debug_info_written.Add();
        stats_.debug_entries_written.Add(batch->debug_entries);
      }
      if (batch->has_inline_info) stats_.inline_info_written.Add();
    }
    stats_.bytes_written.Add(bytes);
  } else {
    stats_.lost_write_error.Add(pending_.size());
    if (g_write_warning.First()) {  // one warning per run, not one per failed write
      Log(LogLevel::kWarn,
          "cannot write %s (%s); records are counted as lost until writing works again (is the disk full?)",
          dump_path_.c_str(), status.ToString().c_str());
    }
  }
  for (Batch* batch : pending_) queue_.Free(batch);
  pending_.clear();
}

size_t Writer::ProcessAvailable() {
  size_t processed = 0;
  while (Batch* batch = queue_.Pop()) {
    ++processed;
    if (batch->kind == BatchKind::kDeferredLoad) {
      batch = ResolveDeferred(batch);
      if (batch == nullptr) continue;
    }
    if (batch->kind == BatchKind::kUnload) {
      ApplyUnload(*batch);
      queue_.Free(batch);
      continue;
    }
    if (IsDuplicate(*batch)) {
      stats_.duplicate_loads.Add();
      queue_.Free(batch);
      continue;
    }
    PrepareLoad(*batch);
    pending_.push_back(batch);
    if (pending_.size() == kMaxBatchesPerWrite) WritePending();
  }
  WritePending();
  if (perf_map_.is_open()) {
    const long lines = perf_map_.Flush();
    if (lines > 0) stats_.perfmap_lines_written.Add(static_cast<uint64_t>(lines));
    if (lines < 0 && g_perfmap_warning.First()) {
      Log(LogLevel::kWarn, "cannot write %s (%s)", perf_map_.path().c_str(), std::strerror(errno));
    }
    if (perf_map_.WantsCompaction(MonotonicNanos())) CompactPerfMap();
  }
  return processed;
}

}  // namespace jitdump_agent
