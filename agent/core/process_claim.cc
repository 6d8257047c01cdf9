// The process-wide claim (process_claim.h).
//
// Why an abstract unix socket: it is the simplest marker that every copy of the library in this
// process can find and no other process can hold. Its name carries the kernel's per-exec random
// bytes (getauxval(AT_RANDOM)), which every copy reads alike and no other process shares. The
// other candidates fail somewhere: a pid alone collides across pid namespaces that share a
// network namespace (two JVMs that are each pid 1); an environment variable is visible to and
// inherited by child processes and can be unset by the application; dlsym(RTLD_DEFAULT) does not
// see agents, which HotSpot loads RTLD_LOCAL; a unique symbol would have to be exported; a lock
// file needs a writable directory and outlives a crash. The kernel drops the socket with the
// process (CLOEXEC: an exec'ed child starts unclaimed). Where sockets are refused (a seccomp
// filter) the claim falls back to this copy's own flag.
#include "agent/core/process_claim.h"

#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace jitdump_agent {
namespace {

std::atomic<bool> g_this_copy{false};
std::atomic<int> g_socket{-1};  // the claim's descriptor (closed exactly once)

// "\0jitdumpagent-<pid>-<32 hex digits of AT_RANDOM>" as a socket address.
socklen_t ProcessAddress(struct sockaddr_un* address) {
  std::memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  char hex[33] = "00000000000000000000000000000000";
  if (const auto* random = reinterpret_cast<const unsigned char*>(::getauxval(AT_RANDOM))) {
    for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", random[i]);
  }
  const int n = std::snprintf(address->sun_path + 1, sizeof address->sun_path - 1, "jitdumpagent-%d-%s",
                              static_cast<int>(::getpid()), hex);
  return static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
}

}  // namespace

Claim ClaimProcess() {
  if (g_this_copy.exchange(true)) return Claim::kHeldByThisCopy;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Claim::kClaimed;  // no sockets here: this copy's flag is all there is
  struct sockaddr_un address;
  const socklen_t length = ProcessAddress(&address);
  if (::bind(fd, reinterpret_cast<const struct sockaddr*>(&address), length) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) {
      g_this_copy.store(false);
      return Claim::kHeldByAnotherCopy;
    }
    return Claim::kClaimed;  // refused for another reason: this copy's flag is all there is
  }
  g_socket.store(fd);
  return Claim::kClaimed;
}

void ReleaseProcess() {
  const int fd = g_socket.exchange(-1);
  if (fd >= 0) ::close(fd);
  g_this_copy.store(false);
}

}  // namespace jitdump_agent
