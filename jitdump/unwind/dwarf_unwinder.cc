#include "jitdump/unwind/dwarf_unwinder.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <cstdio>

#include "jitdump/perfdata/format.h"

namespace jitdump::unwind {
namespace {

namespace pd = jitdump::perfdata;

// x86-64: the DWARF register numbers 0..16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15,
// and 16, the return address column, the pc) and the bits of perf's sample_regs_user that hold
// them (arch/x86/include/uapi/asm/perf_regs.h: AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7,
// IP 8, ..., R8 16 ... R15 23).
constexpr int kDwarfRegs = 17;
constexpr int kPerfRegOfDwarf[kDwarfRegs] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
constexpr int kPerfRegSp = 7;
constexpr int kPerfRegIp = 8;
constexpr size_t kMaxSessions = 8;

// Separate debug files (for .debug_frame) where Debian installs them.
char kDebuginfoDirs[] = "-.debug:/usr/lib/debug";
char* kDebuginfoPath = kDebuginfoDirs;

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &kDebuginfoPath,
};

// A recorded path opened for reading only if it is a regular file: a recording names the
// files, and a FIFO or device there must not block or feed the unwinder. -1 otherwise.
int OpenRegular(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reports the ELF at `path` as `name` at `base`; the descriptor goes to libdwfl on success.
void ReportElf(Dwfl* dwfl, const char* name, const char* path, uint64_t base) {
  const int fd = OpenRegular(path);
  if (fd < 0) return;
  if (dwfl_report_elf(dwfl, name, path, fd, base, false) == nullptr) ::close(fd);
}

}  // namespace

// The sample being unwound.
struct DwarfUnwinder::Current {
  const pd::Sample* sample = nullptr;
  Dwarf_Word regs[kDwarfRegs] = {};
  uint64_t sp = 0;
  std::span<const uint8_t> stack;
  std::vector<uint64_t>* pcs = nullptr;
  Session* session = nullptr;
};

struct DwarfUnwinder::Session {
  uint32_t pid = 0;
  uint64_t generation = 0;
  Dwfl* dwfl = nullptr;
  bool attached = false;
  std::unordered_map<const pd::Dso*, int> fds;  // for memory reads outside the stack
  ~Session() {
    for (const auto& [dso, fd] : fds) {
      if (fd >= 0) ::close(fd);
    }
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

namespace {

}  // namespace

DwarfUnwinder::DwarfUnwinder(pd::AddressSpaces& spaces, const pd::Recording& recording)
    : spaces_(spaces), recording_(recording), current_(std::make_unique<Current>()) {}

DwarfUnwinder::~DwarfUnwinder() {
  sessions_lru_.clear();
  if (vdso_fd_ >= 0) ::close(vdso_fd_);
}

int DwarfUnwinder::VdsoFile() {
  if (vdso_fd_ != -2) return vdso_fd_;
  vdso_fd_ = -1;
  struct utsname u;
  if (::uname(&u) != 0 || recording_.features.os_release != u.release) return vdso_fd_;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < 6 || line.compare(line.size() - 6, 6, "[vdso]") != 0) continue;
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) != 2 || end <= start || end - start > (1u << 20)) break;
    const int fd = ::memfd_create("jitdump-vdso", MFD_CLOEXEC);
    if (fd < 0) break;
    if (::write(fd, reinterpret_cast<const void*>(start), end - start) == static_cast<ssize_t>(end - start)) {
      vdso_fd_ = fd;
    } else {
      ::close(fd);
    }
    break;
  }
  return vdso_fd_;
}

bool DwarfUnwinder::CanUnwind(const pd::Sample& s) {
  return s.has(pd::kSampleRegsUser) && s.has(pd::kSampleStackUser) && s.regs_user.abi == 2 &&
         !s.regs_user.values.empty();
}

DwarfUnwinder::Session* DwarfUnwinder::SessionFor(uint32_t pid) {
  const uint64_t generation = spaces_.Generation(pid);
  for (auto it = sessions_lru_.begin(); it != sessions_lru_.end(); ++it) {
    if ((*it)->pid != pid) continue;
    sessions_lru_.splice(sessions_lru_.begin(), sessions_lru_, it);
    Session* session = sessions_lru_.front().get();
    if (session->generation == generation || Sync(*session)) return session;
    sessions_lru_.pop_front();  // a file was replaced under a reported one: start afresh
    break;
  }
  auto session = std::make_unique<Session>();
  session->pid = pid;
  session->dwfl = dwfl_begin(&kCallbacks);
  if (session->dwfl == nullptr) return nullptr;
  ++sessions_;
  sessions_lru_.push_front(std::move(session));
  if (sessions_lru_.size() > kMaxSessions) sessions_lru_.pop_back();
  Sync(*sessions_lru_.front());
  return sessions_lru_.front().get();
}

bool DwarfUnwinder::Sync(Session& session) {
  // Every file the process has mapped executable is reported before unwinding starts: libdwfl
  // does not find modules reported while it unwinds. Files mapped since the last sample are
  // added; a mapping now holding another file than the module reported there ends the session.
  session.generation = spaces_.Generation(session.pid);
  const std::vector<pd::Mapping>* maps = spaces_.Mappings(session.pid);
  if (maps == nullptr) return true;
  bool consistent = true;
  dwfl_report_begin_add(session.dwfl);
  for (const pd::Mapping& m : *maps) {
    if (m.dso == nullptr || !(m.prot & 0x4)) continue;
    const bool file = m.dso->kind == pd::DsoKind::kFile;
    const bool vdso = m.dso->kind == pd::DsoKind::kVdso;
    if (!file && !vdso) continue;
    const std::string name = vdso ? "[vdso]" : m.dso->path;
    if (Dwfl_Module* mod = dwfl_addrmodule(session.dwfl, m.start)) {
      const char* reported = dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      if (reported == nullptr || name != reported) consistent = false;
      continue;
    }
    if (file) {
      ReportElf(session.dwfl, name.c_str(), name.c_str(), m.start - m.pgoff);
    } else if (VdsoFile() >= 0) {
      const std::string path = "/proc/self/fd/" + std::to_string(vdso_fd_);
      ReportElf(session.dwfl, name.c_str(), path.c_str(), m.start);
    }
  }
  dwfl_report_end(session.dwfl, nullptr, nullptr);
  return consistent;
}

void DwarfUnwinder::Unwind(const pd::Sample& sample, std::vector<uint64_t>* pcs) {
  pcs->clear();
  if (!CanUnwind(sample)) return;
  uint64_t ip = 0;
  const std::span<const uint8_t> stack = sample.stack_user.valid();
  // Without stack bytes perf reports no user frame at all, not even the pc.
  if (!sample.regs_user.Get(kPerfRegIp, &ip) || stack.empty()) return;
  pcs->push_back(ip);
  Session* session = SessionFor(sample.pid);
  if (session == nullptr) return;
  if (dwfl_addrmodule(session->dwfl, ip) == nullptr) return;

  Current& cur = *current_;
  cur.sample = &sample;
  cur.pcs = pcs;
  cur.session = session;
  cur.stack = stack;
  for (int r = 0; r < kDwarfRegs; ++r) {
    uint64_t value = 0;
    sample.regs_user.Get(kPerfRegOfDwarf[r], &value);
    cur.regs[r] = value;
  }
  sample.regs_user.Get(kPerfRegSp, &cur.sp);

  static const Dwfl_Thread_Callbacks kThreadCallbacks = {
      .next_thread = [](Dwfl*, void* arg, void** thread_arg) -> pid_t {
        if (*thread_arg != nullptr) return 0;
        *thread_arg = arg;
        return static_cast<pid_t>(static_cast<DwarfUnwinder*>(arg)->current_->sample->tid);
      },
      .get_thread = [](Dwfl*, pid_t tid, void* arg, void** thread_arg) -> bool {
        *thread_arg = arg;
        return static_cast<uint32_t>(tid) == static_cast<DwarfUnwinder*>(arg)->current_->sample->tid;
      },
      .memory_read = [](Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) -> bool {
        auto* self = static_cast<DwarfUnwinder*>(arg);
        const Current& c = *self->current_;
        // The stack copy: [sp, sp + dyn_size). Like perf's access_mem, the last word counts as
        // outside it (perf reads [sp, sp + size - 8) only), so both stop at the same frame.
        if (addr >= c.sp && addr - c.sp < c.stack.size() && c.stack.size() - (addr - c.sp) > 8) {
          std::memcpy(result, c.stack.data() + (addr - c.sp), 8);
          return true;
        }
        // Else the file mapped there (CFI expressions may read code or data of the file).
        const pd::Mapping* m = self->spaces_.Find(c.sample->pid, pd::kCpumodeUser, addr);
        if (m == nullptr || m->dso == nullptr || m->dso->kind != pd::DsoKind::kFile || addr + 8 > m->end) return false;
        auto [it, inserted] = c.session->fds.try_emplace(m->dso, -1);
        if (inserted) it->second = OpenRegular(m->dso->path.c_str());
        if (it->second < 0) return false;
        return ::pread(it->second, result, 8, static_cast<off_t>(m->FileAddress(addr))) == 8;
      },
      .set_initial_registers = [](Dwfl_Thread* thread, void* arg) -> bool {
        const Current& c = *static_cast<DwarfUnwinder*>(arg)->current_;
        return dwfl_thread_state_registers(thread, 0, kDwarfRegs, c.regs);
      },
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  if (!session->attached) {
    if (!dwfl_attach_state(session->dwfl, nullptr, static_cast<pid_t>(sample.pid), &kThreadCallbacks, this)) return;
    session->attached = true;
  }
  pcs->clear();
  dwfl_getthread_frames(
      session->dwfl, static_cast<pid_t>(sample.tid),
      [](Dwfl_Frame* frame, void* arg) -> int {
        auto* self = static_cast<DwarfUnwinder*>(arg);
        Current& c = *self->current_;
        Dwarf_Addr pc;
        bool activation = false;
        if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
        // A return address: the call instruction is the byte before (perf does the same).
        if (!activation) --pc;
        c.pcs->push_back(pc);
        if (c.pcs->size() >= kMaxFrames) return DWARF_CB_ABORT;
        // Code no file describes (JIT code) has no CFI: stop there, as perf's unwinders do,
        // rather than let libdwfl guess on through frame pointers.
        if (dwfl_addrmodule(c.session->dwfl, pc) == nullptr) return DWARF_CB_ABORT;
        return DWARF_CB_OK;
      },
      this);
  if (pcs->empty()) pcs->push_back(ip);
}

}  // namespace jitdump::unwind
