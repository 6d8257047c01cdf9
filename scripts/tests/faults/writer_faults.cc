// LD_PRELOAD shim that injects faults into one thread of the agent (its writer,
// "jitdump-writer", named by WRITER_FAULTS_THREAD) and nowhere else. Built by meson next to the
// suite (build/scripts/tests/faults/writer_faults.so).
//
// Failing allocations (faults-writer_oom), WRITER_FAULTS_MALLOC_EVERY=N: an allocation fails when
//  - the calling thread has that name;
//  - its caller is code of the library whose path contains WRITER_FAULTS_LIBRARY
//    ("libjitdumpagent"; the agent links libstdc++ statically, so operator new is in there too);
//  - it is the N-th such call (1 in N; deterministic).
// HotSpot's own allocations on that thread (JNI attach, JVMTI answers) are left alone: the JVM
// treats its own allocation failures as fatal, which is no finding about the agent.
// At exit it prints "writer_faults: failed F of N allocations" on stderr, so the test knows the
// fault fired.
//
// A stalled disk (faults-writer_stall), WRITER_FAULTS_STALL_AFTER=N: that thread's pwritev calls
// after the first N never return (a hung NFS or FUSE mount), and the first stalled one prints
// "writer_faults: stalled" on stderr.
//
// A refused thread (faults-thread_refused), WRITER_FAULTS_PTHREAD_FAIL=N: the first N calls of
// pthread_create made by the library named by WRITER_FAULTS_LIBRARY fail with EAGAIN (what
// glibc returns at a thread limit or without memory for a stack); each prints
// "writer_faults: refused pthread_create" on stderr. Any thread may call it here (the agent
// starts its writer from the JVM's thread).
// Both write entry points are defined here under their own names: without this, glibc's headers
// would rename pwritev to pwritev64 (the build defines it for the agent).
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

const char* g_thread;
const char* g_library;
unsigned long g_every;
std::atomic<unsigned long> g_seen;
std::atomic<unsigned long> g_failed;
long g_stall_after = -1;
std::atomic<long> g_pthread_failures_left{0};
std::atomic<long> g_writes;
// The agent's extent (its PT_LOAD segments), found on the first matching call (the library is
// loaded by then: only its own thread calls here).
std::atomic<uintptr_t> g_lo, g_hi;
thread_local bool t_inside;  // dladdr may allocate: never recurse into the check

__attribute__((constructor)) void Init() {
  g_thread = getenv("WRITER_FAULTS_THREAD");
  g_library = getenv("WRITER_FAULTS_LIBRARY");
  const char* every = getenv("WRITER_FAULTS_MALLOC_EVERY");
  g_every = every != nullptr ? strtoul(every, nullptr, 10) : 0;
  const char* stall = getenv("WRITER_FAULTS_STALL_AFTER");
  g_stall_after = stall != nullptr ? strtol(stall, nullptr, 10) : -1;
  const char* refuse = getenv("WRITER_FAULTS_PTHREAD_FAIL");
  g_pthread_failures_left = refuse != nullptr ? strtol(refuse, nullptr, 10) : 0;
}

__attribute__((destructor)) void Report() {
  if (g_every == 0) return;
  char line[128];
  const int n = snprintf(line, sizeof line, "writer_faults: failed %lu of %lu allocations\n", g_failed.load(),
                         g_seen.load());
  if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<size_t>(n));
}

// Sets g_lo/g_hi to the extent of the loaded object named `name`.
int FindExtent(struct dl_phdr_info* info, size_t size, void* name) {
  (void)size;
  if (info->dlpi_name == nullptr || strcmp(info->dlpi_name, static_cast<const char*>(name)) != 0) return 0;
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (start < lo) lo = start;
    if (start + ph->p_memsz > hi) hi = start + ph->p_memsz;
  }
  g_hi.store(hi);
  g_lo.store(lo);
  return 1;
}

bool CallerIsLibrary(const void* caller) {
  const uintptr_t pc = reinterpret_cast<uintptr_t>(caller);
  if (g_lo.load() == 0) {
    Dl_info info;
    if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr || strstr(info.dli_fname, g_library) == nullptr) return 0;
    dl_iterate_phdr(FindExtent, const_cast<char*>(info.dli_fname));
  }
  return pc >= g_lo.load() && pc < g_hi.load();
}

bool OnFaultyThread() {
  char name[17] = {0};
  return g_thread != nullptr && prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && strcmp(name, g_thread) == 0;
}

bool ShouldFail(const void* caller) {
  if (g_every == 0 || g_library == nullptr || t_inside || !OnFaultyThread()) return false;
  t_inside = true;
  const bool ours = CallerIsLibrary(caller);
  t_inside = false;
  if (!ours) return 0;
  const unsigned long n = g_seen.fetch_add(1) + 1;
  if (n % g_every != 0) return 0;
  g_failed.fetch_add(1);
  return 1;
}

}  // namespace

extern "C" {

// The agent calls pwritev64 (_FILE_OFFSET_BITS=64); both names are the same call on x86-64.
ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt, off64_t offset) {
  using Real = ssize_t (*)(int, const struct iovec*, int, off64_t);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pwritev64"));
  if (g_stall_after >= 0 && OnFaultyThread() && g_writes.fetch_add(1) >= g_stall_after) {
    static const char kLine[] = "writer_faults: stalled\n";
    (void)!write(STDERR_FILENO, kLine, sizeof kLine - 1);
    for (;;) pause();  // a write that never returns
  }
  return real(fd, iov, iovcnt, offset);
}

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_create"));
  if (g_library != nullptr && g_pthread_failures_left.load() > 0 && !t_inside) {
    t_inside = true;
    const bool ours = CallerIsLibrary(__builtin_return_address(0));
    t_inside = false;
    if (ours && g_pthread_failures_left.fetch_sub(1) > 0) {
      static const char kLine[] = "writer_faults: refused pthread_create\n";
      (void)!write(STDERR_FILENO, kLine, sizeof kLine - 1);
      return EAGAIN;
    }
  }
  return real(thread, attr, start, arg);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  return pwritev64(fd, iov, iovcnt, offset);
}

void* malloc(size_t size) noexcept {
  if (ShouldFail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_malloc(size);
}

void* calloc(size_t n, size_t size) noexcept {
  if (ShouldFail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_calloc(n, size);
}

void* realloc(void* p, size_t size) noexcept {
  if (size != 0 && ShouldFail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(p, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (ShouldFail(__builtin_return_address(0))) return ENOMEM;
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  if (ShouldFail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_memalign(alignment, size);
}

void* memalign(size_t alignment, size_t size) noexcept {
  if (ShouldFail(__builtin_return_address(0))) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_memalign(alignment, size);
}

}  // extern "C"
