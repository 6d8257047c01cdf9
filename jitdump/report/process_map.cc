#include "jitdump/report/process_map.h"

#include <algorithm>

namespace jitdump::report {

bool DumpFileName(std::string_view path, uint32_t* dump_pid) {
  while (path.size() > 10 && path.substr(path.size() - 10) == " (deleted)") path.remove_suffix(10);
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.size() < 10 || base.substr(0, 4) != "jit-" || base.substr(base.size() - 5) != ".dump") return false;
  base = base.substr(4, base.size() - 9);
  if (base.empty() || base.size() > 10) return false;
  uint64_t value = 0;
  for (char c : base) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return false;
  *dump_pid = static_cast<uint32_t>(value);
  return true;
}

void ProcessMap::OnEvent(const ScriptEvent& event) {
  if (event.pid < 0 || event.pid > UINT32_MAX) return;
  const uint32_t pid = static_cast<uint32_t>(event.pid);
  const uint64_t time = event.time_ns.value_or(0);
  switch (event.kind) {
    case ScriptEventKind::kMmap: {
      uint32_t dump_pid;
      if (!DumpFileName(event.path, &dump_pid)) {
        // perf script prints MMAP2's protection ("r-xp"), an MMAP record "x" when executable.
        const bool exec = event.prot.find('x') != std::string::npos;
        if (exec && !event.path.empty() && event.path.front() == '/' && event.path.rfind("//anon", 0) != 0) {
          executables_.try_emplace(pid, event.path);
        }
        return;
      }
      std::string path = event.path;
      while (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) path.resize(path.size() - 10);
      // Two threads of one agent never map the dump twice, but perf can both synthesize and
      // record a marker when it starts while the agent is attaching: keep the first. Only the
      // latest marker of the path can be that one: an exit or exec after it is after every
      // earlier one too.
      PidMarkers& pm = by_pid_[pid];
      const auto same = pm.latest_by_path.find(path);
      if (same != pm.latest_by_path.end() && !BoundaryBetween(pid, markers_[same->second].time, time)) return;
      ++generation_;
      markers_.push_back(DumpMarker{pid, dump_pid, time, path});
      const size_t index = markers_.size() - 1;
      // Events come in time order: this is an append, unless perf synthesized the marker late.
      const auto at = std::upper_bound(pm.order.begin(), pm.order.end(), time,
                                       [&](uint64_t t, size_t i) { return t < markers_[i].time; });
      pm.order.insert(at, index);
      if (same == pm.latest_by_path.end() || markers_[same->second].time <= time) pm.latest_by_path[path] = index;
      commands_.try_emplace(pid, "");
      return;
    }
    case ScriptEventKind::kComm:
      if (event.tid == event.pid) commands_[pid] = event.comm;
      if (event.exec) {
        AddBoundary(pid, time);
        executables_.erase(pid);  // the new program's mapping comes next
      }
      return;
    case ScriptEventKind::kFork:
      commands_.try_emplace(pid, "");
      if (event.ppid >= 0 && event.ppid <= UINT32_MAX && static_cast<uint32_t>(event.ppid) != pid &&
          executables_.count(pid) == 0) {
        const auto parent = executables_.find(static_cast<uint32_t>(event.ppid));
        if (parent != executables_.end()) executables_.emplace(pid, parent->second);
      }
      return;
    case ScriptEventKind::kExit:
      if (event.tid == event.pid) AddBoundary(pid, time);
      return;
  }
}

void ProcessMap::AddMarker(uint32_t pid, uint32_t dump_pid, std::string path) {
  ++generation_;
  markers_.push_back(DumpMarker{pid, dump_pid, 0, std::move(path)});
  auto& list = by_pid_[pid].order;
  list.insert(list.begin(), markers_.size() - 1);
}

void ProcessMap::AddBoundary(uint32_t pid, uint64_t time) {
  ++generation_;
  std::vector<uint64_t>& times = boundaries_[pid];
  times.insert(std::upper_bound(times.begin(), times.end(), time), time);  // an append, in time order
}

bool ProcessMap::BoundaryBetween(uint32_t pid, uint64_t after, uint64_t until) const {
  const auto it = boundaries_.find(pid);
  if (it == boundaries_.end() || after >= until) return false;
  // The first boundary after `after`: is it at or before `until`?
  const auto first = std::upper_bound(it->second.begin(), it->second.end(), after);
  return first != it->second.end() && *first <= until;
}

int64_t ProcessMap::MarkerFor(uint32_t pid, std::optional<uint64_t> time) const {
  const auto it = by_pid_.find(pid);
  if (it == by_pid_.end() || it->second.order.empty()) return -1;
  const std::vector<size_t>& list = it->second.order;
  if (!time) return static_cast<int64_t>(list.back());
  // The latest marker at or before the sample, when the process image is still the same.
  const auto later = std::upper_bound(list.begin(), list.end(), *time,
                                      [&](uint64_t t, size_t i) { return t < markers_[i].time; });
  if (later != list.begin()) {
    const size_t index = *(later - 1);
    if (!BoundaryBetween(pid, markers_[index].time, *time)) return static_cast<int64_t>(index);
  }
  // Else a marker after the sample of the same process image: the agent attached later.
  if (later == list.end()) return -1;
  return BoundaryBetween(pid, *time, markers_[*later].time) ? -1 : static_cast<int64_t>(*later);
}

ProcessMap::MarkerSpan ProcessMap::MarkerSpanFor(uint32_t pid, uint64_t time) const {
  MarkerSpan span;
  span.marker = MarkerFor(pid, time);
  // Each of MarkerFor's questions (which markers are at or before the time, which exits and
  // execs lie between it and a marker) changes its answer only where the time reaches a marker's
  // or a boundary's time: the stretch runs from the last of those at or before `time` to the
  // first after it.
  auto narrow = [&](uint64_t at) {
    if (at <= time) {
      span.from = std::max(span.from, at);
    } else {
      span.until = std::min(span.until, at);
    }
  };
  auto around = [&](auto first, auto last, auto time_of) {
    const auto after = std::partition_point(first, last, [&](const auto& x) { return time_of(x) <= time; });
    if (after != first) narrow(time_of(*(after - 1)));
    if (after != last) narrow(time_of(*after));
  };
  if (const auto it = by_pid_.find(pid); it != by_pid_.end()) {
    const std::vector<size_t>& list = it->second.order;
    around(list.begin(), list.end(), [&](size_t i) { return markers_[i].time; });
  }
  if (const auto it = boundaries_.find(pid); it != boundaries_.end()) {
    around(it->second.begin(), it->second.end(), [](uint64_t t) { return t; });
  }
  return span;
}

std::string ProcessMap::CommandOf(uint32_t pid) const {
  const auto it = commands_.find(pid);
  return it == commands_.end() ? std::string() : it->second;
}

std::string ProcessMap::ExecutableOf(uint32_t pid) const {
  const auto it = executables_.find(pid);
  return it == executables_.end() ? std::string() : it->second;
}

}  // namespace jitdump::report
