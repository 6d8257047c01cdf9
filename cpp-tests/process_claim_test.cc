// The one-agent-per-process claim (agent/core/process_claim.h): a second load of this copy sees its
// own claim; a claim held outside this copy (what another copy of the library makes: the same
// abstract socket name, bound by other code in this process) is seen too; a released claim can
// be taken again; nothing leaks into another process.
#include "agent/core/process_claim.h"

#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace jitdump_agent {
namespace {

// Binds the name another copy of the library would bind in this process; returns the socket.
int BindAsAnotherCopy() {
  struct sockaddr_un address {};
  address.sun_family = AF_UNIX;
  const auto* random = reinterpret_cast<const unsigned char*>(::getauxval(AT_RANDOM));
  char hex[33] = {0};
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", random[i]);
  const int n = std::snprintf(address.sun_path + 1, sizeof address.sun_path - 1, "jitdumpagent-%d-%s",
                              static_cast<int>(::getpid()), hex);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const socklen_t length = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
  if (::bind(fd, reinterpret_cast<const struct sockaddr*>(&address), length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(ProcessClaim, ASecondLoadOfThisCopySeesItsOwnClaim) {
  ASSERT_EQ(ClaimProcess(), Claim::kClaimed);
  EXPECT_EQ(ClaimProcess(), Claim::kHeldByThisCopy);
  ReleaseProcess();
  EXPECT_EQ(ClaimProcess(), Claim::kClaimed);  // a load that disabled itself let go
  ReleaseProcess();
}

TEST(ProcessClaim, AClaimHeldByAnotherCopyIsSeenAndLeftAlone) {
  const int other = BindAsAnotherCopy();
  ASSERT_GE(other, 0) << std::strerror(errno);
  EXPECT_EQ(ClaimProcess(), Claim::kHeldByAnotherCopy);
  EXPECT_EQ(ClaimProcess(), Claim::kHeldByAnotherCopy);  // and this copy holds nothing meanwhile
  ::close(other);  // the other copy gave up (or its process is gone)
  EXPECT_EQ(ClaimProcess(), Claim::kClaimed);
  ReleaseProcess();
}

TEST(ProcessClaim, AnotherProcessIsNotClaimed) {
  ASSERT_EQ(ClaimProcess(), Claim::kClaimed);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A forked child has another pid, so another name (an exec'ed one also other random bytes).
    ::_exit(BindAsAnotherCopy() >= 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ReleaseProcess();
}

}  // namespace
}  // namespace jitdump_agent
