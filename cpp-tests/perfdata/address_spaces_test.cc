// AddressSpaces' thread names, as perf script prints them for threads no COMM named, and what
// it tells caches about the mappings that changed under them.
#include "jitdump/perfdata/address_spaces.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace jitdump::perfdata {
namespace {

TEST(AddressSpacesTest, UnnamedThreadsAreNamedAsPerfNamesThem) {
  AddressSpaces spaces;
  // The idle thread of every CPU in a system-wide recording (perf's machine__idle_thread).
  EXPECT_EQ(spaces.ThreadComm(0), "swapper");
  EXPECT_EQ(spaces.ThreadComm(4242), ":4242");
  // A sample without a thread carries tid -1; perf prints its pid_t.
  EXPECT_EQ(std::string(spaces.ThreadComm(UINT32_MAX)), ":-1");
}

Mmap UserMmap(uint32_t pid, uint64_t start, uint64_t len, std::string_view file, uint64_t pgoff = 0) {
  Mmap m;
  m.mmap2 = true;
  m.misc = kCpumodeUser;
  m.pid = m.tid = pid;
  m.start = start;
  m.len = len;
  m.pgoff = pgoff;
  m.prot = 5;  // PROT_READ | PROT_EXEC
  m.filename = file;
  return m;
}

TEST(AddressSpacesTest, CodeCacheGrowingInPlaceChangesOnlyItsNewEnd) {
  AddressSpaces spaces;
  spaces.OnMmap(UserMmap(7, 0x10000, 0x1000, "/usr/lib/libc.so.6"));
  spaces.OnMmap(UserMmap(7, 0x40000, 0x2000, "//anon"));
  const uint64_t before = spaces.FindGeneration(7);
  ASSERT_NE(spaces.Find(7, kCpumodeUser, 0x40800), nullptr);
  EXPECT_EQ(spaces.Find(7, kCpumodeUser, 0x42800), nullptr);
  // HotSpot commits more of its code cache: the same anonymous mapping, longer.
  spaces.OnMmap(UserMmap(7, 0x40000, 0x4000, "//anon"));
  EXPECT_GT(spaces.FindGeneration(7), before);
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x40800, before));
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x10800, before));
  EXPECT_FALSE(spaces.Unchanged(7, kCpumodeUser, 0x42800, before));  // was in no mapping
  EXPECT_NE(spaces.Find(7, kCpumodeUser, 0x42800), nullptr);
  // Another process's changes are not this one's.
  const uint64_t now = spaces.FindGeneration(7);
  spaces.OnMmap(UserMmap(8, 0x40000, 0x1000, "/usr/lib/libz.so"));
  EXPECT_EQ(spaces.FindGeneration(7), now);
}

TEST(AddressSpacesTest, AFileMappedOverOtherCodeChangesItsRange) {
  AddressSpaces spaces;
  spaces.OnMmap(UserMmap(7, 0x40000, 0x4000, "//anon"));
  const uint64_t before = spaces.FindGeneration(7);
  spaces.OnMmap(UserMmap(7, 0x41000, 0x1000, "/usr/lib/libz.so"));
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x40800, before));
  EXPECT_FALSE(spaces.Unchanged(7, kCpumodeUser, 0x41800, before));
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x42800, before));
  // The same file at another offset: its addresses are other file offsets now.
  const uint64_t second = spaces.FindGeneration(7);
  spaces.OnMmap(UserMmap(7, 0x41000, 0x1000, "/usr/lib/libz.so", 0x1000));
  EXPECT_FALSE(spaces.Unchanged(7, kCpumodeUser, 0x41800, second));
  // Mapped again as it was: nothing changes.
  const uint64_t third = spaces.FindGeneration(7);
  spaces.OnMmap(UserMmap(7, 0x41000, 0x1000, "/usr/lib/libz.so", 0x1000));
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x41800, third));
}

TEST(AddressSpacesTest, ForgetsOldChangesAndForkedProcessesStartAfresh) {
  AddressSpaces spaces;
  spaces.OnMmap(UserMmap(7, 0x40000, 0x1000, "//anon"));
  const uint64_t before = spaces.FindGeneration(7);
  for (uint64_t i = 0; i < 100; ++i) spaces.OnMmap(UserMmap(7, 0x100000 + 0x1000 * i, 0x1000, "/usr/lib/libz.so"));
  // Too many changes since: no longer known, whatever the address.
  EXPECT_FALSE(spaces.Unchanged(7, kCpumodeUser, 0x40800, before));
  EXPECT_TRUE(spaces.Unchanged(7, kCpumodeUser, 0x40800, spaces.FindGeneration(7)));
  const uint64_t at_fork = spaces.FindGeneration(9);
  Task fork;
  fork.fork = true;
  fork.pid = fork.tid = 9;
  fork.ppid = fork.ptid = 7;
  spaces.OnTask(fork);
  EXPECT_FALSE(spaces.Unchanged(9, kCpumodeUser, 0x40800, at_fork));
}

}  // namespace
}  // namespace jitdump::perfdata
