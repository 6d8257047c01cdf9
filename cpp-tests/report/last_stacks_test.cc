// LastStacks: a thread's last stack shares with the next one exactly the frames at the root end
// that are the same address in the same cpumode, and only those whose result may be reused.
#include "jitdump/report/last_stacks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace jitdump::report {
namespace {

struct Raw {
  uint64_t ip = 0;
  uint16_t cpumode = 0;
};

std::vector<LastStacks::Frame> Stack(const std::vector<Raw>& raw) {
  std::vector<LastStacks::Frame> frames;
  for (const Raw& r : raw) frames.push_back(LastStacks::Frame{r.ip, 0, r.cpumode, 0, LastStacks::kReusable});
  return frames;
}

size_t Common(const std::vector<LastStacks::Frame>& last, const std::vector<Raw>& next) {
  return LastStacks::CommonRoot(last, std::span<const Raw>(next));
}

TEST(LastStacksTest, CountsTheSameFramesAtTheRootEnd) {
  const auto last = Stack({{0x10, 2}, {0x20, 2}, {0x30, 2}, {0x40, 2}});
  EXPECT_EQ(Common(last, {{0x11, 2}, {0x30, 2}, {0x40, 2}}), 2u);         // shorter, other leaf
  EXPECT_EQ(Common(last, {{0x10, 2}, {0x20, 2}, {0x30, 2}, {0x40, 2}}), 4u);  // the same stack
  EXPECT_EQ(Common(last, {{0x9, 2}, {0x10, 2}, {0x20, 2}, {0x30, 2}, {0x40, 2}}), 4u);  // deeper
  EXPECT_EQ(Common(last, {{0x30, 2}, {0x41, 2}}), 0u);                     // another root
  EXPECT_EQ(Common(last, {{0x30, 2}, {0x40, 1}}), 0u);                     // another cpumode
  EXPECT_EQ(Common(last, {}), 0u);
  EXPECT_EQ(Common({}, {{0x40, 2}}), 0u);
  // The same address above a different frame: only the run at the root end counts.
  EXPECT_EQ(Common(last, {{0x20, 2}, {0x31, 2}, {0x40, 2}}), 1u);
}

TEST(LastStacksTest, StopsAtAFrameWhoseResultMayNotBeReused) {
  auto last = Stack({{0x10, 2}, {0x20, 2}, {0x30, 2}, {0x40, 2}});
  last[2].position &= static_cast<uint8_t>(~LastStacks::kReusable);
  EXPECT_EQ(Common(last, {{0x10, 2}, {0x20, 2}, {0x30, 2}, {0x40, 2}}), 1u);
}

TEST(LastStacksTest, ASlotHoldsOneThreadAtATime) {
  LastStacks stacks;
  LastStacks::Stack& a = stacks.Slot(7);
  EXPECT_EQ(a.tid, UINT32_MAX);  // none yet
  a.tid = 7;
  EXPECT_EQ(&stacks.Slot(7), &a);
  // Another thread in the same slot: the caller sees it is not its own.
  EXPECT_EQ(stacks.Slot(7 + LastStacks::kSlots).tid, 7u);
  EXPECT_NE(stacks.Slot(8).tid, 7u);
  stacks.clear();
  EXPECT_EQ(stacks.Slot(7).tid, UINT32_MAX);
}

}  // namespace
}  // namespace jitdump::report
