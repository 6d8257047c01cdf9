// libFuzzer target: the jitdump read half (jitdump/read/), everything the CLI asks
// of it: Parse, Check, the final code map, addr2line lookups, lines, inline chains and source
// ranges. Besides no crash / leak / UB, checks the reader's own promises: problems are sorted
// by offset inside the file, records lie inside the file, a truncated tail is at the end.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/queries.h"

namespace {

[[noreturn]] void Fail(const char* what, uint64_t value) {
  std::fprintf(stderr, "reader_fuzzer: %s (%llu)\n", what, static_cast<unsigned long long>(value));
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const jitdump::JitDump dump = jitdump::Parse(bytes);
  if (dump.file_size != size) Fail("file_size", dump.file_size);
  for (const jitdump::Record& r : dump.records) {
    if (r.offset >= size || r.offset + r.total_size > size) Fail("record outside the file", r.offset);
  }
  if (dump.truncated_offset && *dump.truncated_offset > size) Fail("truncated offset", *dump.truncated_offset);
  const std::vector<jitdump::Problem> problems = jitdump::Check(dump);
  for (size_t i = 0; i < problems.size(); ++i) {
    if (problems[i].offset > size) Fail("problem offset outside the file", problems[i].offset);
    if (i > 0 && problems[i].offset < problems[i - 1].offset) Fail("problems not sorted", i);
    (void)jitdump::FormatProblem(problems[i]);
  }
  (void)dump.HasErrors();

  const jitdump::CodeMap map(dump);
  uint64_t probes[4] = {0, UINT64_MAX, 0, 0};
  if (size >= 16) std::memcpy(&probes[2], data + size - 16, 16);
  for (uint64_t addr : probes) {
    const int64_t found = map.Find(addr);
    if (found >= static_cast<int64_t>(dump.records.size())) Fail("CodeMap::Find out of range", found);
    (void)jitdump::FindLoad(dump, addr);
  }
  size_t loads = 0;
  for (size_t i = 0; i < dump.records.size() && loads < 64; ++i) {
    const jitdump::LoadBody* load = dump.records[i].load();
    if (load == nullptr) continue;
    ++loads;
    std::string file;
    uint32_t line = 0;
    for (uint64_t addr : {load->code_addr, load->code_addr + load->code_size / 2,
                          load->code_addr + (load->code_size ? load->code_size - 1 : 0)}) {
      (void)jitdump::FindLine(dump, i, addr, &file, &line);
      (void)jitdump::InlineChain(dump, i, addr);
    }
    (void)jitdump::SourceRange(dump, i);
  }
  for (const auto& [start, span] : map.spans()) {
    // An empty span is possible: a load at 0xffffffffffffffff is clamped to end there (reported).
    if (span.end < span.start || span.record >= dump.records.size()) Fail("bad span", start);
  }
  return 0;
}
