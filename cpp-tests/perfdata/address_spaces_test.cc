// AddressSpaces' thread names, as perf script prints them for threads no COMM named.
#include "jitdump/perfdata/address_spaces.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

}  // namespace
}  // namespace jitdump::perfdata
