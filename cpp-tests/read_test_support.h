// Helpers the tests of the read half share: matching problems, printing them, and the samply
// record the decoder and consumer-rule tests craft.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/read/problem.h"

namespace jitdump::testing {

inline bool HasProblem(const std::vector<Problem>& problems, uint64_t offset, Severity severity,
                       std::string_view text = "") {
  return std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
    return p.offset == offset && p.severity == severity && p.message.find(text) != std::string::npos;
  });
}

// Every problem, one per line: what a failing assertion prints.
inline std::string Dump(const std::vector<Problem>& problems) {
  std::string s;
  for (const Problem& p : problems) s += FormatProblem(p) + "\n";
  return s;
}

inline size_t Count(const std::vector<Problem>& problems, Severity severity) {
  return static_cast<size_t>(std::count_if(problems.begin(), problems.end(),
                                           [&](const Problem& p) { return p.severity == severity; }));
}

// A samply record with three functions in two files, the given calls, ranges and lines, then
// its CODE_LOAD of `code_size` bytes.
inline Builder SamplyWith(std::initializer_list<Builder::Call> calls, std::initializer_list<Builder::Range> ranges,
                          std::initializer_list<Builder::Line> lines, uint64_t code_size = 0x100) {
  Builder b;
  b.Header();
  b.Samply(5, {"A.java", "B.java"}, {"a", "b", "c"}, {{0, 0, 1, 0, 0}, {1, 1, 1, 0, 0}, {2, 1, 1, 0, 0}}, calls,
           ranges, lines);
  b.Load(6, 0x1000, code_size, 0, "a");
  return b;
}

inline constexpr size_t kSamplyAt = 40;
// Lists: files "A.java\0B.java\0" (16), names "a\0b\0c\0" (8), then functions.
inline constexpr size_t kFunctionsAt = kSamplyAt + 48 + 16 + 8;
inline constexpr size_t kCallsAt = kFunctionsAt + 3 * 20;

}  // namespace jitdump::testing
