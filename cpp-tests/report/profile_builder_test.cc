// ProfileBuilder's samples: identical (process, thread, stack) merge into one Sample, and
// anything that differs (a location, the stack's length, the thread, the process) makes another;
// Take() gives them in the order of their paths (SamplesByPath's), which then keeps it. Once its
// indexes are released (the reader's last sample is in), Take() gives the same profile, and an
// added location or sample is refused.
#include "jitdump/report/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "jitdump/report/profile_check.h"
#include "jitdump/report/sample_order.h"

namespace jitdump::report {
namespace {

TEST(ProfileBuilderTest, MergesIdenticalStacksOfAThreadInPathOrder) {
  ProfileBuilder b;
  const uint32_t jvm = b.AddProcess(10, "java", "/tmp/jit-10.dump");
  const uint32_t shell = b.AddProcess(11, "sh", "");
  // Leaf first: the paths from the root are 3-2-1, 2-1, 4-2-1.
  const std::vector<uint32_t> a{1, 2, 3}, prefix{1, 2}, other{1, 2, 4};
  b.AddSample(other, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(a, shell, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(a, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(prefix, jvm, "http-nio-8080-exec-1", 1, 250);
  b.AddSample(a, jvm, "http-nio-8080-exec-2", 1, 250);
  b.AddSample(a, jvm, "http-nio-8080-exec-1", 2, 500);
  b.AddSample(prefix, jvm, "http-nio-8080-exec-1", 1, 250);
  const Profile p = b.Take();
  ASSERT_EQ(p.samples.size(), 5u);
  // The JVM's paths in order (a prefix before what it begins), then the shell's.
  EXPECT_EQ(p.samples[0].locations, prefix);
  EXPECT_EQ(p.samples[0].count, 2u);
  EXPECT_EQ(p.samples[0].nanos, 500u);
  // One path on two threads: two samples next to each other, in either order.
  const bool first_is_exec_1 = p.threads[p.samples[1].thread] == "http-nio-8080-exec-1";
  const Sample& exec_1 = p.samples[first_is_exec_1 ? 1 : 2];
  const Sample& exec_2 = p.samples[first_is_exec_1 ? 2 : 1];
  EXPECT_EQ(exec_1.locations, a);
  EXPECT_EQ(p.threads[exec_1.thread], "http-nio-8080-exec-1");
  EXPECT_EQ(exec_1.process, jvm);
  EXPECT_EQ(exec_1.count, 3u);
  EXPECT_EQ(exec_1.nanos, 750u);
  EXPECT_EQ(exec_2.locations, a);
  EXPECT_EQ(p.threads[exec_2.thread], "http-nio-8080-exec-2");
  EXPECT_EQ(exec_2.count, 1u);
  EXPECT_EQ(p.samples[3].locations, other);
  EXPECT_EQ(p.samples[3].process, jvm);
  EXPECT_EQ(p.samples[4].locations, a);
  EXPECT_EQ(p.samples[4].process, shell);
  EXPECT_EQ(p.processes.size(), 2u);
  // Already in order: SamplesByPath keeps it.
  std::vector<uint32_t> identity(p.samples.size());
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(SamplesByPath(p), identity);
  // The builder is left empty.
  EXPECT_TRUE(b.Take().samples.empty());
}

TEST(ProfileBuilderTest, ReleasedIndexesKeepEverySampleAndRefuseMore) {
  auto fill = [](ProfileBuilder& b) {
    const uint32_t process = b.AddProcess(10, "java", "");
    for (uint32_t i = 0; i < 3000; ++i) {
      const uint32_t function = b.AddFunction("f" + std::to_string(i % 50), "F.java", FrameKind::kCompiled);
      const uint32_t location = b.AddLocation(0x1000 + 16 * (i % 700), 0, {Line{function, i % 7}});
      b.AddSample({location, i % 3, i % 5}, process, i % 2 == 0 ? "main" : "worker", 1, 100);
    }
  };
  ProfileBuilder kept;
  fill(kept);
  ProfileBuilder released;
  fill(released);
  released.ReleaseIndexes();
  released.ReleaseIndexes();  // again: nothing more to free
  // Named after the release, as native frames are.
  released.AddFunction("named_late", "", FrameKind::kNative);
  kept.AddFunction("named_late", "", FrameKind::kNative);
  EXPECT_THROW(released.AddLocation(0x9000, 0, {}), std::logic_error);
  EXPECT_THROW(released.AddSample({1, 2}, 0, "main", 1, 100), std::logic_error);
  const Profile a = kept.Take();
  const Profile b = released.Take();
  ASSERT_EQ(a.samples.size(), b.samples.size());
  EXPECT_GT(a.samples.size(), 100u);
  EXPECT_EQ(a.locations.size(), b.locations.size());
  EXPECT_EQ(a.functions.size(), b.functions.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    EXPECT_EQ(a.samples[i].locations, b.samples[i].locations) << i;
    EXPECT_EQ(a.samples[i].count, b.samples[i].count) << i;
    EXPECT_EQ(a.threads[a.samples[i].thread], b.threads[b.samples[i].thread]) << i;
  }
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
  std::vector<bool> seen(kStacks);
  for (size_t s = 0; s < p.samples.size(); ++s) {
    const Sample& sample = p.samples[s];
    ASSERT_FALSE(sample.locations.empty());
    const uint32_t i = sample.locations.front() / 7;  // each stack's leaf is unique
    ASSERT_LT(i, kStacks);
    EXPECT_FALSE(seen[i]) << i;
    seen[i] = true;
    ASSERT_EQ(sample.locations.size(), 1 + i % 40) << i;
    EXPECT_EQ(sample.locations.front(), i * 7);
    EXPECT_EQ(sample.count, 3u);
    EXPECT_EQ(p.threads[sample.thread], i % 2 ? "main" : "worker");
    if (s > 0) {
      EXPECT_FALSE(PathAfter(p.samples[s - 1], sample)) << s;
    }
  }
}

// Samples in no order (a profile put together by hand) are sorted by SamplesByPath.
TEST(ProfileBuilderTest, SamplesByPathSortsSamplesOutOfOrder) {
  Profile p;
  p.samples.resize(4);
  p.samples[0].locations = {5, 9};
  p.samples[1].locations = {9};
  p.samples[2].locations = {1, 2, 8};
  p.samples[3].locations = {7, 9};
  p.samples[3].process = 1;
  EXPECT_EQ(SamplesByPath(p), (std::vector<uint32_t>{2, 1, 0, 3}));
}

// What the outputs index is checked before they walk a profile: a sample's locations, process
// and thread name.
TEST(ProfileBuilderTest, CheckProfileFindsWhatASampleNamesAndDoesNotExist) {
  ProfileBuilder b;
  const uint32_t f = b.AddFunction("f", "", FrameKind::kNative);
  const uint32_t l = b.AddLocation(0x10, 0, {{f, 0}});
  b.AddProcess(42, "java", "");
  b.AddSample({l}, 0, "main", 1, 0);
  const Profile made = b.Take();
  ASSERT_EQ(made.threads, std::vector<std::string>{"main"});
  EXPECT_TRUE(CheckProfile(made).ok());
  Profile p = made;
  p.samples[0].thread = 1;
  EXPECT_FALSE(CheckProfile(p).ok());
  p = made;
  p.samples[0].process = 1;
  EXPECT_FALSE(CheckProfile(p).ok());
  p = made;
  p.samples[0].locations = {l + 1};
  EXPECT_FALSE(CheckProfile(p).ok());
}

}  // namespace
}  // namespace jitdump::report
