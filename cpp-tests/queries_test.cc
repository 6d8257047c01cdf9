// The queries (address -> load, now and at a time; lines; inline chains; source ranges) and
// every part of the read half on randomly mutated files.
#include "jitdump/read/queries.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cpp-tests/read_test_support.h"
#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/regular_file.h"

namespace jitdump {
namespace {

using namespace jitdump::testing;  // Builder and the problem helpers

// ---- queries ----

TEST(ReaderQuery, LatestLoadCoveringAnAddressWins) {
  Builder b;
  b.Header();
  b.Load(5, 0x1000, 0x100, 0, "old");
  b.Load(6, 0x1040, 0x40, 1, "new");
  const JitDump dump = Parse(b.bytes());
  EXPECT_EQ(FindLoad(dump, 0x1000), 0);
  EXPECT_EQ(FindLoad(dump, 0x1040), 1);
  EXPECT_EQ(FindLoad(dump, 0x107F), 1);
  EXPECT_EQ(FindLoad(dump, 0x1080), 0);
  EXPECT_EQ(FindLoad(dump, 0x1100), -1);
  const CodeMap map(dump);
  ASSERT_EQ(map.spans().size(), 3u);
  EXPECT_EQ(map.Find(0x1000), 0);
  EXPECT_EQ(map.Find(0x1040), 1);
  EXPECT_EQ(map.Find(0x1080), 0);
  EXPECT_EQ(map.Find(0x10FF), 0);
  EXPECT_EQ(map.Find(0x1100), -1);
  EXPECT_EQ(map.Find(0xFFF), -1);
  auto it = map.spans().begin();
  EXPECT_EQ(it->second.end, 0x1040u);
  ++it;
  EXPECT_EQ(it->second.start, 0x1040u);
  EXPECT_EQ(it->second.end, 0x1080u);
}

TEST(ReaderQuery, LoadAtATimeFollowsCodeCacheReuse) {
  Builder b;
  b.Header();
  b.Load(100, 0x1000, 0x100, 0, "first");
  b.Load(300, 0x1000, 0x100, 1, "second");
  b.Load(200, 0x1000, 0x80, 2, "backdated");  // file order wins among qualifying loads
  const JitDump dump = Parse(b.bytes());
  EXPECT_EQ(FindLoadAt(dump, 0x1010, 50), -1);
  EXPECT_EQ(FindLoadAt(dump, 0x1010, 150), 0);
  EXPECT_EQ(FindLoadAt(dump, 0x1010, 250), 2);
  EXPECT_EQ(FindLoadAt(dump, 0x1090, 250), 0);
  EXPECT_EQ(FindLoadAt(dump, 0x1090, 350), 1);
  EXPECT_EQ(FindLoadAt(dump, 0x1010, 350), 2);
  EXPECT_EQ(FindLoad(dump, 0x1010), 2);
}

// A call counts only inside its parent: a child whose range lies outside the parent's (a
// producer's mistake) is not part of the chain, and the walk goes on to the parent's later
// siblings.
TEST(ReaderQuery, InlineChainTakesACallOnlyInsideItsParent) {
  Builder b;
  b.Header();
  b.Samply(2000, {"Outer.java", "Mid.java", "Leaf.java"}, {"Outer.run", "Mid.step", "Leaf.get"},
           {{0, 0, 24, 0, 0}, {1, 1, 4, 0, 0}, {2, 2, 2, 0, 0}},
           {{0, 1, 1, 30, 9}, {1, 1, 2, 7, 5}, {0, 1, 2, 40, 3}},
           {{0x20, 0x20}, {0x80, 0x10}, {0x80, 0x20}},
           {{0x0, 0, 25, 0}, {0x20, 1, 5, 0}, {0x40, 0, 31, 0}, {0x80, 2, 3, 0}, {0xA0, 0, 33, 0}});
  b.Load(2001, 0x10000, 0x100, 1, "Outer.run");
  const JitDump dump = Parse(b.bytes());
  const size_t load = 1;
  ASSERT_NE(dump.records[load].load(), nullptr);

  auto chain = InlineChain(dump, load, 0x10088);  // the second Leaf.get call, not the first
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].function, "Leaf.get");
  EXPECT_EQ(chain[1].function, "Outer.run");
  EXPECT_EQ(chain[1].line, 40u);

  chain = InlineChain(dump, load, 0x10028);  // inside Mid.step
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].function, "Mid.step");
  EXPECT_EQ(chain[1].line, 30u);

  chain = InlineChain(dump, load, 0x10050);  // outer code only
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].function, "Outer.run");
}

TEST(ReaderQuery, InlineChainInnermostFirstWithCallLines) {
  const Builder b = testing::InlineExample();
  const JitDump dump = Parse(b.bytes());
  ASSERT_TRUE(Check(dump).empty()) << Dump(Check(dump));
  const size_t load = 2;
  ASSERT_NE(dump.records[load].load(), nullptr);

  auto chain = InlineChain(dump, load, 0x10048);  // inside Leaf.get
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].function, "Leaf.get");
  EXPECT_EQ(chain[0].file, "Leaf.java");
  EXPECT_EQ(chain[0].line, 3u);
  EXPECT_EQ(chain[1].function, "Mid.step");
  EXPECT_EQ(chain[1].file, "Mid.java");
  EXPECT_EQ(chain[1].line, 7u);  // call line of Leaf.get
  EXPECT_EQ(chain[2].function, "Outer.run");
  EXPECT_EQ(chain[2].file, "Outer.java");
  EXPECT_EQ(chain[2].line, 30u);  // call line of Mid.step

  chain = InlineChain(dump, load, 0x100A4);  // Mid.step's second range
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].function, "Mid.step");
  EXPECT_EQ(chain[0].line, 9u);
  EXPECT_EQ(chain[1].line, 30u);

  chain = InlineChain(dump, load, 0x10090);  // outer code only
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].function, "Outer.run");
  EXPECT_EQ(chain[0].line, 31u);

  EXPECT_TRUE(InlineChain(dump, 3, 0x20000).empty());  // Plain.fn has no inline record
  EXPECT_EQ(SourceRange(dump, load), "Outer.java:24-33");

  std::string file;
  uint32_t line = 0;
  ASSERT_TRUE(FindLine(dump, load, 0x10065, &file, &line));
  EXPECT_EQ(file, "Mid.java");
  EXPECT_EQ(line, 8u);
}

// The walk that skips a missed call's subtree names every address as the plain walk does (the
// same record without subtree_end): random call trees with random ranges, siblings overlapping
// and callees outside their callers included (a valid record may hold those: they are warnings).
// Every other round's record is ordered as this agent writes them (each call's ranges ascending,
// siblings by their first range), where the walk also stops early (InlineBody::ordered); ranges
// and siblings may still overlap there.
TEST(ReaderQuery, InlineChainSkipsSubtreesLikeThePlainWalk) {
  std::mt19937 random(99);
  for (int round = 0; round < 200; ++round) {
    const uint32_t functions = 1 + random() % 6;
    std::vector<std::string> name_texts;
    std::vector<Builder::Function> function_records;
    for (uint32_t f = 0; f < functions; ++f) {
      name_texts.push_back("F" + std::to_string(f));
      function_records.push_back({f, 0, f + 1, 0, 0});
    }
    const std::vector<std::string_view> names(name_texts.begin(), name_texts.end());
    std::vector<Builder::Call> calls;
    std::vector<Builder::Range> ranges;
    const bool ordered = round % 2 == 1;
    std::vector<uint32_t> sibling_start(42, 0);  // ordered: the first start of the last call at each depth
    uint32_t depth = 0;
    const int count = 1 + static_cast<int>(random() % 40);
    for (int c = 0; c < count; ++c) {
      depth = c == 0 ? 0 : static_cast<uint32_t>(random() % (depth + 2));  // no deeper than one more
      const uint32_t range_count = 1 + random() % 3;
      const uint32_t callee = static_cast<uint32_t>(random() % functions);
      calls.push_back({depth, range_count, callee, 10 + static_cast<uint32_t>(c), 0});
      uint32_t start = ordered ? sibling_start[depth] + static_cast<uint32_t>(random() % 0x20) : 0;
      if (ordered) {
        sibling_start[depth] = start;
        sibling_start[depth + 1] = 0;  // this call's own calls start afresh
      }
      for (uint32_t r = 0; r < range_count; ++r) {
        if (ordered) {
          if (r > 0) start += static_cast<uint32_t>(random() % 0x30);
        } else {
          start = static_cast<uint32_t>(random() % 0x100);
        }
        ranges.push_back({start, 1 + static_cast<uint32_t>(random() % 0x40)});
      }
    }
    Builder b;
    b.Header();
    b.Samply(1, std::vector<std::string_view>{"A.java"}, names, function_records, calls, ranges,
             std::vector<Builder::Line>{{0, 0, 5, 0}});
    b.Load(2, 0x10000, 0x180, 0, "F0");
    const JitDump dump = Parse(b.bytes());
    ASSERT_TRUE(dump.records[0].valid) << "round " << round;
    if (ordered) {
      ASSERT_TRUE(dump.records[0].inline_info()->ordered) << "round " << round;
    }
    JitDump plain = Parse(b.bytes());
    auto* info = const_cast<InlineBody*>(plain.records[0].inline_info());
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(info->subtree_end.size(), calls.size());
    info->subtree_end.clear();  // the walk then takes every call
    info->ordered = false;      // and every range
    for (uint64_t addr = 0x10000; addr < 0x10180; ++addr) {
      const std::vector<InlineFrame> skipping = InlineChain(dump, 1, addr);
      const std::vector<InlineFrame> walked = InlineChain(plain, 1, addr);
      ASSERT_EQ(skipping.size(), walked.size()) << "round " << round << " address " << addr;
      for (size_t k = 0; k < walked.size(); ++k) {
        EXPECT_EQ(skipping[k].function, walked[k].function);
        EXPECT_EQ(skipping[k].line, walked[k].line);
      }
    }
  }
}

// ---- robustness ----

// Mutates `original` (byte flips, 0xFF bytes, truncation) and runs every query on the result.
// JITDUMP_FUZZ_ITERATIONS raises the count for a longer manual run (e.g. under ASan).
void Mutate(const std::vector<uint8_t>& original, int iterations, uint32_t seed) {
  if (const char* env = std::getenv("JITDUMP_FUZZ_ITERATIONS")) iterations = std::atoi(env);
  std::mt19937 rng(seed);
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<uint8_t> bytes = original;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % bytes.size();
      bytes[at] = static_cast<uint8_t>(rng() % 3 == 0 ? 0xFF : rng());
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    const JitDump dump = Parse(bytes);
    (void)Check(dump);
    for (size_t i = 0; i < dump.records.size(); ++i) {
      if (dump.records[i].load() == nullptr) continue;
      const uint64_t addr = dump.records[i].load()->code_addr + rng() % 0x200;
      (void)InlineChain(dump, i, addr);
      (void)SourceRange(dump, i);
      (void)FindLoadAt(dump, addr, rng());
      std::string file;
      uint32_t line;
      (void)FindLine(dump, i, addr, &file, &line);
    }
    const CodeMap map(dump);
    (void)map.Find(0x10040);
  }
}

TEST(ReaderRobustness, RandomMutationsNeverCrash) { Mutate(testing::InlineExample().bytes(), 3000, 12345); }

TEST(ReaderRobustness, RandomMutationsOfTheNodeFileNeverCrash) {
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadWholeFile(JITDUMP_FIXTURE_DIR "/node-v20-fib.jitdump", &bytes).ok());
  Mutate(bytes, 300, 777);
}

}  // namespace
}  // namespace jitdump
