#include "agent/core/code_history.h"

#include <gtest/gtest.h>

namespace jitdump_agent {
namespace {

TEST(CodeHistoryTest, FreshRangeWasNeverTouched) {
  CodeHistory h;
  EXPECT_EQ(h.Touch(0x1000, 0x100, 50), 0u);
}

TEST(CodeHistoryTest, ReturnsLatestOverlappingTouch) {
  CodeHistory h;
  h.Touch(0x1000, 0x100, 10);
  h.Touch(0x1100, 0x100, 20);
  h.Touch(0x2000, 0x100, 99);
  EXPECT_EQ(h.Touch(0x10f0, 0x20, 30), 20u);  // straddles both first spans
  EXPECT_EQ(h.Touch(0x1000, 0x10, 40), 10u);  // left remainder of the first span survived
  EXPECT_EQ(h.Touch(0x1110, 0x10, 41), 20u);  // right remainder of the second span survived
  EXPECT_EQ(h.Touch(0x1100, 0x1, 42), 30u);
}

TEST(CodeHistoryTest, UnloadThenReuseGivesTheUnloadTime) {
  CodeHistory h;
  h.Touch(0x5000, 0x400, 100);                // load A
  h.Touch(0x5000, 0x400, 250);                // unload A
  EXPECT_EQ(h.Touch(0x5100, 0x80, 300), 250u);  // B reuses part of A's memory
}

TEST(CodeHistoryTest, AdjacentRangesDoNotOverlap) {
  CodeHistory h;
  h.Touch(0x1000, 0x100, 10);
  EXPECT_EQ(h.Touch(0x1100, 0x100, 20), 0u);
  EXPECT_EQ(h.Touch(0x0f00, 0x100, 30), 0u);
}

TEST(CodeHistoryTest, SpanCountStaysBoundedUnderReuse) {
  CodeHistory h;
  for (uint64_t t = 1; t <= 100000; ++t) h.Touch(0x10000 + (t % 64) * 0x100, 0x100, t);
  EXPECT_LE(h.span_count(), 64u);
}

// A million distinct adjacent ranges: memory stays bounded, and a merged floor is never earlier
// than the real one (merging only makes backdating more conservative).
TEST(CodeHistoryTest, ManyDistinctRangesStayBoundedAndConservative) {
  CodeHistory h;
  for (uint64_t i = 0; i < 1000000; ++i) h.Touch(0x100000 + i * 0x40, 0x40, i + 1);
  EXPECT_LE(h.span_count(), CodeHistory::kMaxSpans + 1);
  for (uint64_t i : {0ull, 12345ull, 999999ull}) {
    EXPECT_GE(h.Touch(0x100000 + i * 0x40, 0x40, 2000000 + i), i + 1) << i;
  }
}

// HotSpot's code ranges are separated by gaps (nmethod headers, metadata): a million of them
// must stay bounded too, with the merging pass amortized (it halves the spans, so it runs about
// once per kMaxSpans/2 touches, not on every touch), and floors stay conservative.
TEST(CodeHistoryTest, ManyRangesWithGapsStayBoundedAndCoarsenRarely) {
  CodeHistory h;
  constexpr uint64_t kTouches = 1000000;
  for (uint64_t i = 0; i < kTouches; ++i) h.Touch(0x100000 + i * 0x80, 0x40, i + 1);
  EXPECT_LE(h.span_count(), CodeHistory::kMaxSpans + 1);
  EXPECT_LE(h.coarsenings(), kTouches / (CodeHistory::kMaxSpans / 2) + 1);
  for (uint64_t i : {0ull, 12345ull, 999999ull}) {
    EXPECT_GE(h.Touch(0x100000 + i * 0x80, 0x40, 2000000 + i), i + 1) << i;
  }
}

TEST(CodeHistoryTest, ZeroSizeAndTopOfAddressSpace) {
  CodeHistory h;
  EXPECT_EQ(h.Touch(UINT64_MAX - 4, 100, 1), 0u);
  EXPECT_EQ(h.Touch(UINT64_MAX - 2, 0, 2), 1u);
}

}  // namespace
}  // namespace jitdump_agent
