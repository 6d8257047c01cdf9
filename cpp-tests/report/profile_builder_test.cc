// ProfileBuilder's samples: identical (process, thread, stack) merge into one Sample, in the
// order each was first added, and anything that differs (a location, the stack's length, the
// thread, the process) makes another.
#include "jitdump/report/profile.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace jitdump::report {
namespace {

TEST(ProfileBuilderTest, MergesIdenticalStacksOfAThreadInFirstSeenOrder) {
  ProfileBuilder b;
  const uint32_t jvm = b.AddProcess(10, "java", "/tmp/jit-10.dump");
  const uint32_t shell = b.AddProcess(11, "sh", "");
  const std::vector<uint32_t> a{1, 2, 3}, prefix{1, 2}, other{1, 2, 4};
  b.AddSample(a, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(prefix, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(a, jvm, "http-nio-8080-exec-2", 1, 250);
  b.AddSample(a, jvm, "http-nio-8080-exec-1", 2, 500);
  b.AddSample(other, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(a, shell, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(prefix, jvm, "http-nio-8080-exec-1", 1, 250);
  const Profile p = b.Take();
  ASSERT_EQ(p.samples.size(), 5u);
  EXPECT_EQ(p.samples[0].locations, a);
  EXPECT_EQ(p.samples[0].thread, "http-nio-8080-exec-1");
  EXPECT_EQ(p.samples[0].process, jvm);
  EXPECT_EQ(p.samples[0].count, 3u);
  EXPECT_EQ(p.samples[0].nanos, 750u);
  EXPECT_EQ(p.samples[1].locations, prefix);
  EXPECT_EQ(p.samples[1].count, 2u);
  EXPECT_EQ(p.samples[2].thread, "http-nio-8080-exec-2");
  EXPECT_EQ(p.samples[2].count, 1u);
  EXPECT_EQ(p.samples[3].locations, other);
  EXPECT_EQ(p.samples[4].process, shell);
  EXPECT_EQ(p.processes.size(), 2u);
  // The builder is left empty.
  EXPECT_TRUE(b.Take().samples.empty());
}

TEST(ProfileBuilderTest, ManyDistinctStacksEachKeepTheirCounts) {
  ProfileBuilder b;
  const uint32_t process = b.AddProcess(10, "java", "");
  constexpr uint32_t kStacks = 20000;
  for (int round = 0; round < 3; ++round) {
    for (uint32_t i = 0; i < kStacks; ++i) {
      std::vector<uint32_t> stack(1 + i % 40);
      for (uint32_t k = 0; k < stack.size(); ++k) stack[k] = i * 7 + k;
      b.AddSample(stack, process, i % 2 ? "main" : "worker", 1, 0);
    }
  }
  const Profile p = b.Take();
  ASSERT_EQ(p.samples.size(), kStacks);
  for (uint32_t i = 0; i < kStacks; ++i) {
    ASSERT_EQ(p.samples[i].locations.size(), 1 + i % 40) << i;
    EXPECT_EQ(p.samples[i].locations.front(), i * 7);
    EXPECT_EQ(p.samples[i].count, 3u);
    EXPECT_EQ(p.samples[i].thread, i % 2 ? "main" : "worker");
  }
}

}  // namespace
}  // namespace jitdump::report
