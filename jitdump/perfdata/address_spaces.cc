#include "jitdump/perfdata/address_spaces.h"

#include <algorithm>

namespace jitdump::perfdata {
namespace {

constexpr uint32_t kProtExec = 0x4;
constexpr uint32_t kMapHugetlb = 0x40000;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// perf's is_anon_memory and is_no_dso_memory (util/map.c).
bool IsAnonymous(std::string_view path) {
  return path == "//anon" || StartsWith(path, "/dev/zero") || StartsWith(path, "/anon_hugepage");
}
bool IsNoFile(std::string_view path) {
  return StartsWith(path, "[stack") || StartsWith(path, "/SYSV") || path == "[heap]";
}

// A kernel module's file ("/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko.xz") as perf names it:
// "[ext4]" ('-' becomes '_', as the kernel names modules).
std::string ModuleName(std::string_view path) {
  if (path.size() >= 2 && path.front() == '[' && path.back() == ']') return std::string(path);
  std::string_view base = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  const size_t ko = base.find(".ko");
  if (ko != std::string_view::npos) base = base.substr(0, ko);
  std::string name = "[" + std::string(base) + "]";
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

AddressSpaces::AddressSpaces() = default;
AddressSpaces::~AddressSpaces() = default;

void AddressSpaces::SetBuildIds(const std::vector<BuildIdEntry>& build_ids) {
  for (const BuildIdEntry& b : build_ids) header_build_ids_[b.filename] = b.id;
}

const Dso* AddressSpaces::Intern(const Mmap& m, bool kernel) {
  Dso dso;
  dso.path.assign(m.filename);
  if (kernel) {
    if (StartsWith(dso.path, "[kernel.kallsyms]") || StartsWith(dso.path, "[guest.kernel.kallsyms")) {
      dso.kind = DsoKind::kKernel;
      dso.name = StartsWith(dso.path, "[guest") ? "[guest.kernel.kallsyms]" : "[kernel.kallsyms]";
    } else {
      dso.kind = DsoKind::kModule;
      dso.name = ModuleName(dso.path);
    }
  } else {
    const bool exec = (m.prot & kProtExec) != 0;
    if ((IsAnonymous(dso.path) || (m.flags & kMapHugetlb) || IsNoFile(dso.path)) && exec) {
      dso.kind = DsoKind::kAnonymous;
      dso.name = "/tmp/perf-" + std::to_string(m.pid) + ".map";
    } else if (IsAnonymous(dso.path) || IsNoFile(dso.path)) {
      dso.kind = DsoKind::kNoFile;
      dso.name = dso.path;
    } else if (dso.path == "[vdso]") {
      dso.kind = DsoKind::kVdso;
      dso.name = dso.path;
    } else {
      dso.kind = DsoKind::kFile;
      dso.name = dso.path;
    }
  }
  dso.maj = m.maj;
  dso.min = m.min;
  dso.ino = m.ino;
  if (!m.build_id.empty()) {
    dso.build_id.assign(m.build_id.begin(), m.build_id.end());
  } else {
    const auto it = header_build_ids_.find(kernel && dso.kind == DsoKind::kKernel ? dso.name : dso.path);
    if (it != header_build_ids_.end()) dso.build_id = it->second;
  }
  std::string key = dso.name;
  key += '\0';
  key.append(reinterpret_cast<const char*>(&dso.maj), sizeof dso.maj);
  key.append(reinterpret_cast<const char*>(&dso.min), sizeof dso.min);
  key.append(reinterpret_cast<const char*>(&dso.ino), sizeof dso.ino);
  key.append(dso.build_id.begin(), dso.build_id.end());
  auto [it, inserted] = dsos_.try_emplace(std::move(key));
  if (inserted) it->second = std::make_unique<Dso>(std::move(dso));
  return it->second.get();
}

// Whether an address in both mappings is the same file offset of the same file in each.
bool SameFileAddresses(const Mapping& a, const Mapping& b) {
  if (a.dso != b.dso) return false;
  const bool file_backed = a.dso != nullptr && (a.dso->kind == DsoKind::kFile || a.dso->kind == DsoKind::kVdso);
  return !file_backed || a.start - a.pgoff == b.start - b.pgoff;
}

void AddressSpaces::Insert(Space& space, const Mapping& m, uint64_t generation) {
  std::vector<Mapping>& maps = space.maps;
  // Cut whatever the new mapping overlaps (perf's maps__fixup_overlappings): keep the parts
  // before and after it.
  auto first = std::lower_bound(maps.begin(), maps.end(), m.start, [](const Mapping& x, uint64_t s) { return x.end <= s; });
  // What the new mapping alters: the parts of its range that no mapping of the same file
  // offsets covered (a code cache growing in place alters only its new end). One range from
  // the first such part to the last is enough for the caches that ask.
  uint64_t altered_start = UINT64_MAX, altered_end = 0;
  uint64_t covered_to = m.start;
  for (auto it = first; it != maps.end() && it->start < m.end; ++it) {
    const uint64_t from = std::max(it->start, m.start), to = std::min(it->end, m.end);
    const bool same = SameFileAddresses(*it, m);
    if (from > covered_to || !same) {  // a hole before it, or it itself
      altered_start = std::min(altered_start, covered_to);
      altered_end = same ? from : to;
    }
    covered_to = to;
  }
  if (covered_to < m.end) {
    altered_start = std::min(altered_start, covered_to);
    altered_end = m.end;
  }
  if (altered_start < altered_end) NoteChange(space, generation, altered_start, altered_end);
  std::vector<Mapping> kept;
  auto last = first;
  while (last != maps.end() && last->start < m.end) {
    if (last->start < m.start) {
      Mapping before = *last;
      before.end = m.start;
      kept.push_back(before);
    }
    if (last->end > m.end) {
      Mapping after = *last;
      after.pgoff += m.end - after.start;
      after.start = m.end;
      kept.push_back(after);
    }
    ++last;
  }
  kept.insert(std::upper_bound(kept.begin(), kept.end(), m.start,
                               [](uint64_t s, const Mapping& x) { return s < x.start; }),
              m);
  const auto at = maps.erase(first, last);
  maps.insert(at, kept.begin(), kept.end());
  space.last = 0;
}

const Mapping* AddressSpaces::Lookup(Space& space, uint64_t addr) {
  const std::vector<Mapping>& maps = space.maps;
  if (space.last < maps.size() && maps[space.last].start <= addr && addr < maps[space.last].end) {
    return &maps[space.last];
  }
  auto it = std::upper_bound(maps.begin(), maps.end(), addr, [](uint64_t a, const Mapping& x) { return a < x.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  if (addr >= it->end) return nullptr;
  space.last = static_cast<size_t>(it - maps.begin());
  return &*it;
}

AddressSpaces::Space& AddressSpaces::ProcessSpace(uint32_t pid) { return processes_[pid]; }

void AddressSpaces::OnMmap(const Mmap& m) {
  const uint16_t mode = m.cpumode();
  const bool kernel = mode == kCpumodeKernel || mode == kCpumodeGuestKernel;
  if (m.len == 0 || m.start + m.len < m.start) return;
  Mapping mapping;
  mapping.start = m.start;
  mapping.end = m.start + m.len;
  mapping.pgoff = m.pgoff;
  mapping.prot = m.prot;
  mapping.dso = Intern(m, kernel);
  Space& space = kernel ? kernel_ : ProcessSpace(m.pid);
  space.generation = ++generations_;
  Insert(space, mapping, space.generation);
}

void AddressSpaces::NoteChange(Space& space, uint64_t generation, uint64_t start, uint64_t end) {
  if (space.changes.size() == kChangesKept) {
    space.forgotten = space.changes.front().generation;
    space.changes.erase(space.changes.begin());
  }
  space.changes.push_back(Change{generation, start, end});
}

bool AddressSpaces::UnchangedIn(const Space& space, uint64_t addr, uint64_t since) {
  if (since < space.forgotten) return false;
  for (auto it = space.changes.rbegin(); it != space.changes.rend() && it->generation > since; ++it) {
    if (it->start <= addr && addr < it->end) return false;
  }
  return true;
}

AddressSpaces::Space* AddressSpaces::FindSpace(uint32_t pid) {
  if (last_space_ == nullptr || pid != last_pid_) {
    const auto it = processes_.find(pid);
    last_pid_ = pid;
    last_space_ = it != processes_.end() ? &it->second : nullptr;  // null: looked up again next time
  }
  return last_space_;
}

uint64_t AddressSpaces::FindGeneration(uint32_t pid) {
  const Space* space = FindSpace(pid);
  return std::max(kernel_.generation, space != nullptr ? space->generation : 0);
}

bool AddressSpaces::Unchanged(uint32_t pid, uint16_t cpumode, uint64_t addr, uint64_t since) {
  if (!UnchangedIn(kernel_, addr, since)) return false;
  if (cpumode == kCpumodeKernel || cpumode == kCpumodeGuestKernel) return true;
  const Space* space = FindSpace(pid);
  // A process first seen after `since` had no mappings then.
  if (space == nullptr) return true;
  return space->generation <= since || UnchangedIn(*space, addr, since);
}

void AddressSpaces::OnComm(const Comm& c) { comms_[c.tid].assign(c.comm); }

void AddressSpaces::OnTask(const Task& t) {
  if (!t.fork) return;  // perf keeps an exited thread's state until the pid comes again
  // The child's name: its parent thread's.
  const auto parent_comm = comms_.find(t.ptid);
  if (parent_comm != comms_.end()) {
    std::string comm = parent_comm->second;
    comms_[t.tid] = std::move(comm);
  } else {
    if (CommMemo& memo = comm_memo_[t.tid % comm_memo_.size()]; memo.tid == t.tid) memo = CommMemo{};
    comms_.erase(t.tid);
  }
  if (t.pid == t.ppid) return;  // a new thread shares its process's mappings
  // A new process (a reused pid starts afresh) gets a copy of its parent's mappings.
  const auto parent = processes_.find(t.ppid);
  Space& child = processes_[t.pid];
  child.maps = parent != processes_.end() ? parent->second.maps : std::vector<Mapping>();
  child.last = 0;
  child.generation = ++generations_;
  NoteChange(child, child.generation, 0, UINT64_MAX);
}

const std::vector<Mapping>* AddressSpaces::Mappings(uint32_t pid) const {
  const auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second.maps;
}

uint64_t AddressSpaces::Generation(uint32_t pid) const {
  const auto it = processes_.find(pid);
  return it == processes_.end() ? 0 : it->second.generation;
}

const Mapping* AddressSpaces::Find(uint32_t pid, uint16_t cpumode, uint64_t addr) {
  if (cpumode == kCpumodeKernel || cpumode == kCpumodeGuestKernel) return Lookup(kernel_, addr);
  Space* space = FindSpace(pid);
  const Mapping* found = space != nullptr ? Lookup(*space, addr) : nullptr;
  if (found == nullptr && IsKernelAddress(addr)) found = Lookup(kernel_, addr);
  return found;
}

std::string_view AddressSpaces::ThreadComm(uint32_t tid) {
  CommMemo& memo = comm_memo_[tid % comm_memo_.size()];
  if (memo.comm != nullptr && memo.tid == tid) return *memo.comm;
  const auto it = comms_.find(tid);
  if (it != comms_.end()) {
    memo = CommMemo{tid, &it->second};
    return it->second;
  }
  // perf names the idle thread (tid 0) "swapper" (machine__idle_thread), and any other thread it
  // has no COMM for ":TID" with the tid as a pid_t: a sample without a thread (tid -1) is ":-1".
  if (tid == 0) return "swapper";
  default_comm_ = ":" + std::to_string(static_cast<int32_t>(tid));
  return default_comm_;
}

size_t AddressSpaces::mappings() const {
  size_t n = kernel_.maps.size();
  for (const auto& [pid, space] : processes_) n += space.maps.size();
  return n;
}

}  // namespace jitdump::perfdata
