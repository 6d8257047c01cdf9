// Folded stacks against a plain model: each sample's text built frame by frame, merged and
// sorted as std::map sorts strings. Names are chosen to be prefixes of one another and to hold
// bytes below and above ';' (' ', '(', '1', '_', 'z') and the bytes folding rewrites (';', a line
// break), where ordering the texts by their frames' names alone would go wrong.
#include "jitdump/report/folded.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "jitdump/report/profile.h"
#include "jitdump/report/sample_order.h"

namespace jitdump::report {
namespace {

std::string Folded(std::string_view name) {
  std::string out;
  for (char c : name) out.push_back(c == ';' ? ',' : (c == '\n' || c == '\r') ? ' ' : c);
  return out;
}

std::string Suffix(FrameKind kind) {
  switch (kind) {
    case FrameKind::kCompiled: return "_[j]";
    case FrameKind::kInlined: return "_[i]";
    case FrameKind::kInterpreted: return "_[0]";
    case FrameKind::kKernel: return "_[k]";
    default: return "";
  }
}

// The model: every sample's text, merged by text, in std::map's (byte) order.
std::string Expected(const Profile& profile, bool annotate) {
  std::map<std::string, uint64_t> lines;
  for (const Sample& sample : profile.samples) {
    const std::string& thread = profile.threads[sample.thread];
    std::string text = Folded(thread.empty() ? "[unknown]" : thread);
    for (size_t l = sample.locations.size(); l-- > 0;) {
      const Location& location = profile.locations[sample.locations[l]];
      for (size_t k = location.lines.size(); k-- > 0;) {
        const Function& f = profile.functions[location.lines[k].function];
        text += ";" + Folded(f.name) + (annotate ? Suffix(f.kind) : "");
      }
    }
    lines[text] += sample.count;
  }
  std::string out;
  for (const auto& [text, count] : lines) out += text + " " + std::to_string(count) + "\n";
  return out;
}

Profile PrefixNamedProfile(uint32_t seed) {
  const std::vector<std::string> names = {"a",   "a1",  "a(",   "a ",  "a_",  "az",  "a;b", "a\nb", "a,b",
                                          "a b", "ab",  "a1;",  "",    "b",   "b;",  "a(x", "a((", "z"};
  const FrameKind kinds[] = {FrameKind::kCompiled, FrameKind::kInlined, FrameKind::kNative, FrameKind::kKernel};
  ProfileBuilder builder;
  std::mt19937 random(seed);
  std::vector<uint32_t> functions;
  for (size_t i = 0; i < names.size(); ++i) {
    // The same name in two files or of two kinds: one folded frame (without --annotate).
    functions.push_back(builder.AddFunction(names[i], "F.java", kinds[i % 4]));
    functions.push_back(builder.AddFunction(names[i], "G.java", kinds[(i + 1) % 4]));
  }
  // Two processes: the same thread name and stack in both is one line.
  const uint32_t processes[] = {builder.AddProcess(1, "java", ""), builder.AddProcess(2, "java", "")};
  std::vector<uint32_t> locations;
  for (uint32_t i = 0; i < 60; ++i) {
    std::vector<Line> lines;
    const size_t depth = random() % 3;  // 0: a location no function names (no folded frame)
    for (size_t k = 0; k < depth; ++k) lines.push_back(Line{functions[random() % functions.size()], 0});
    locations.push_back(builder.AddLocation(0x1000 + i, 0, lines));
  }
  const std::vector<std::string> threads = {"main", "main;x", "", "worker 1", "worker"};
  for (int s = 0; s < 3000; ++s) {
    std::vector<uint32_t> stack(random() % 7);
    for (uint32_t& location : stack) location = locations[random() % locations.size()];
    builder.AddSample(stack, processes[random() % 2], threads[random() % threads.size()], 1 + random() % 3, 0);
  }
  return builder.Take();
}

TEST(FoldedTest, LinesAreTheTextsInByteOrderMergedByText) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Profile profile = PrefixNamedProfile(seed);
    for (const bool annotate : {false, true}) {
      std::ostringstream out;
      WriteFolded(profile, FoldedOptions{annotate}, out);
      ASSERT_EQ(out.str(), Expected(profile, annotate)) << "seed " << seed << (annotate ? " annotated" : "");
    }
  }
}

TEST(FoldedTest, FoldStacksMatchesWriteFolded) {
  const Profile profile = PrefixNamedProfile(7);
  std::string lines;
  for (const auto& [text, count] : FoldStacks(profile, FoldedOptions{})) lines += text + " " + std::to_string(count) + "\n";
  EXPECT_EQ(lines, Expected(profile, false));
}

// The order the folded tree (and the flame graph and pprof) are built in: (process, locations
// root first), a path before the longer ones it begins; against std::sort of the same keys.
TEST(FoldedTest, SamplesByPathIsTheOrderOfProcessThenLocationsFromTheRoot) {
  const Profile profile = PrefixNamedProfile(3);
  auto key = [&](uint32_t s) {
    std::vector<uint32_t> k{profile.samples[s].process};
    k.insert(k.end(), profile.samples[s].locations.rbegin(), profile.samples[s].locations.rend());
    return k;
  };
  const std::vector<uint32_t> order = SamplesByPath(profile);
  ASSERT_EQ(order.size(), profile.samples.size());
  std::vector<uint32_t> expected(order.size());
  for (uint32_t i = 0; i < expected.size(); ++i) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(key(order[i]), key(expected[i])) << "position " << i;
  std::sort(expected.begin(), expected.end());
  std::vector<uint32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, expected);  // each sample once
}

TEST(FoldedTest, EmptyProfileWritesNothing) {
  std::ostringstream out;
  WriteFolded(Profile{}, FoldedOptions{}, out);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace jitdump::report
