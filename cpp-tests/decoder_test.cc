// The decoder: every record type from the encoder, cross-endian files, malformed input
// (each defect a Problem at its exact offset) and the samply record's own rules.
#include "jitdump/read/decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpp-tests/read_test_support.h"
#include "jitdump/write/encoder.h"
#include "jitdump/read/consumer_rules.h"
#include "jitdump/read/queries.h"

namespace jitdump {
namespace {

using namespace jitdump::testing;  // Builder and the problem helpers

// ---- writer -> reader round trips, every record type ----

TEST(ReaderRoundTrip, EveryRecordTypeFromTheEncoder) {
  std::vector<uint8_t> file(sizeof(FileHeader));
  const FileHeader header = MakeFileHeader({62, 777, 5, 0});
  std::memcpy(file.data(), &header, sizeof header);
  auto append = [&](size_t size, auto encode) {
    const size_t at = file.size();
    file.resize(at + size);
    EXPECT_EQ(encode(file.data() + at), file.data() + file.size());
    return at;
  };
  const uint8_t unwind_data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  UnwindingInfo unwind;
  unwind.timestamp = 10;
  unwind.eh_frame_hdr_size = 4;
  unwind.mapped_size = 16;
  unwind.unwind_data = unwind_data;
  const size_t unwind_at = append(UnwindingInfoSize(unwind), [&](uint8_t* o) { return EncodeUnwindingInfo(unwind, o); });
  const DebugEntry entries[] = {{0x5000, 3, 1, "X.java"}, {0x5010, 4, 0, "Y.java"}};
  const size_t debug_at = append(DebugInfoSize(entries), [&](uint8_t* o) { return EncodeDebugInfo(11, 0x5000, entries, o); });
  const std::string_view files[] = {"X.java", "Z.java"};
  const std::string_view names[] = {"X.a", "Z.b"};
  const SamplyFunctionRecord functions[] = {{0, 0, 2, 0, 0}, {1, 1, 9, 1, 0}};
  const SamplyInlineCallRecord calls[] = {{0, 2, 1, 3, 4}};
  const SamplyRangeRecord ranges[] = {{0, 8}, {0x10, 4}};
  const SamplyLineRecord lines[] = {{0, 1, 10, 0}, {8, 0, 3, 0}, {0x10, 1, 11, 0}};
  InlineDebugInfo inl;
  inl.timestamp = 12;
  inl.files = files;
  inl.function_names = names;
  inl.functions = functions;
  inl.calls = calls;
  inl.ranges = ranges;
  inl.lines = lines;
  const size_t inline_at = append(InlineDebugInfoSize(inl), [&](uint8_t* o) { return EncodeInlineDebugInfo(inl, o); });
  const uint8_t code[32] = {0xC3};
  CodeLoad load;
  load.timestamp = 13;
  load.pid = 777;
  load.tid = 778;
  load.vma = 0x5000;
  load.code_addr = 0x5000;
  load.code_size = sizeof code;
  load.code_index = 42;
  load.name = "X.a";
  load.code = code;
  const size_t load_at = append(CodeLoadSize(load), [&](uint8_t* o) { return EncodeCodeLoad(load, o); });
  CodeMove move;
  move.timestamp = 14;
  move.pid = 777;
  move.tid = 779;
  move.vma = 0x9000;
  move.old_code_addr = 0x5000;
  move.new_code_addr = 0x9000;
  move.code_size = 32;
  move.code_index = 42;
  const size_t move_at = append(CodeMoveSize(), [&](uint8_t* o) { return EncodeCodeMove(move, o); });
  const size_t close_at = append(CloseSize(), [&](uint8_t* o) { return EncodeClose(15, o); });

  const JitDump dump = Parse(file);
  ASSERT_TRUE(dump.header_ok) << Dump(dump.problems);
  EXPECT_TRUE(dump.problems.empty()) << Dump(dump.problems);
  EXPECT_TRUE(Check(dump).empty()) << Dump(Check(dump));
  EXPECT_FALSE(dump.cross_endian);
  EXPECT_EQ(dump.header.version, 1u);
  EXPECT_EQ(dump.header.elf_mach, 62u);
  EXPECT_EQ(dump.header.pid, 777u);
  EXPECT_EQ(dump.header.timestamp, 5u);
  ASSERT_EQ(dump.records.size(), 6u);

  const Record& u = dump.records[0];
  EXPECT_EQ(u.offset, unwind_at);
  EXPECT_EQ(u.timestamp, 10u);
  ASSERT_NE(u.unwinding(), nullptr);
  EXPECT_EQ(u.unwinding()->unwind_data_size, 12u);
  EXPECT_EQ(u.unwinding()->eh_frame_hdr_size, 4u);
  EXPECT_EQ(u.unwinding()->mapped_size, 16u);

  const Record& d = dump.records[1];
  EXPECT_EQ(d.offset, debug_at);
  ASSERT_NE(d.debug_info(), nullptr);
  EXPECT_EQ(d.debug_info()->code_addr, 0x5000u);
  ASSERT_EQ(d.debug_info()->entries.size(), 2u);
  EXPECT_EQ(d.debug_info()->entries[1].addr, 0x5010u);
  EXPECT_EQ(d.debug_info()->entries[1].line, 4);
  EXPECT_EQ(d.debug_info()->entries[0].discrim, 1);
  EXPECT_EQ(d.debug_info()->entries[1].file, "Y.java");

  const Record& i = dump.records[2];
  EXPECT_EQ(i.offset, inline_at);
  ASSERT_NE(i.inline_info(), nullptr);
  EXPECT_TRUE(i.valid);
  const InlineBody& ib = *i.inline_info();
  EXPECT_EQ(ib.files, (std::vector<std::string>{"X.java", "Z.java"}));
  EXPECT_EQ(ib.function_names, (std::vector<std::string>{"X.a", "Z.b"}));
  ASSERT_EQ(ib.functions.size(), 2u);
  EXPECT_EQ(ib.functions[1].start_line, 9u);
  EXPECT_EQ(ib.functions[1].start_column, 1u);
  ASSERT_EQ(ib.calls.size(), 1u);
  EXPECT_EQ(ib.calls[0].call_column_number, 4u);
  ASSERT_EQ(ib.ranges.size(), 2u);
  EXPECT_EQ(ib.ranges[1].start_offset, 0x10u);
  ASSERT_EQ(ib.lines.size(), 3u);
  EXPECT_EQ(ib.lines[2].line_number, 11u);
  EXPECT_EQ(ib.max_depth, 1u);

  const Record& l = dump.records[3];
  EXPECT_EQ(l.offset, load_at);
  ASSERT_NE(l.load(), nullptr);
  EXPECT_EQ(l.load()->name, "X.a");
  EXPECT_EQ(l.load()->pid, 777u);
  EXPECT_EQ(l.load()->tid, 778u);
  EXPECT_EQ(l.load()->code_addr, 0x5000u);
  EXPECT_EQ(l.load()->code_size, 32u);
  EXPECT_EQ(l.load()->code_index, 42u);
  EXPECT_EQ(l.load()->code_offset, load_at + CodeLoadSize(load) - 32);
  EXPECT_EQ(file[l.load()->code_offset], 0xC3);
  EXPECT_EQ(l.load()->debug_info, 1);
  EXPECT_EQ(l.load()->inline_info, 2);
  EXPECT_EQ(l.load()->unwinding_info, 0);

  const Record& m = dump.records[4];
  EXPECT_EQ(m.offset, move_at);
  ASSERT_NE(m.move(), nullptr);
  EXPECT_EQ(m.move()->old_code_addr, 0x5000u);
  EXPECT_EQ(m.move()->new_code_addr, 0x9000u);
  EXPECT_EQ(m.move()->tid, 779u);
  EXPECT_EQ(m.move()->code_index, 42u);

  EXPECT_EQ(dump.records[5].offset, close_at);
  EXPECT_EQ(dump.records[5].id, 3u);
  EXPECT_EQ(dump.records[5].timestamp, 15u);
  EXPECT_FALSE(dump.truncated_offset.has_value());
}

TEST(ReaderRoundTrip, BuilderLittleEndianMatchesEncoderBytes) {
  // The test builder and the encoder agree byte for byte on a CODE_LOAD.
  Builder b;
  b.Load(7, 0x4000, 4, 3, "m");
  CodeLoad load;
  load.timestamp = 7;
  load.pid = 4242;
  load.tid = 4243;
  load.vma = 0x4000;
  load.code_addr = 0x4000;
  load.code_size = 4;
  load.code_index = 3;
  load.name = "m";
  const uint8_t code[] = {0x90, 0x91, 0x92, 0x93};
  load.code = code;
  std::vector<uint8_t> encoded(CodeLoadSize(load));
  EncodeCodeLoad(load, encoded.data());
  EXPECT_EQ(b.bytes(), encoded);
}

TEST(Reader, CrossEndianFileDecodesEveryField) {
  const Builder little = testing::InlineExample(false);
  const Builder big = testing::InlineExample(true);
  ASSERT_NE(little.bytes(), big.bytes());
  const JitDump a = Parse(little.bytes());
  const JitDump b = Parse(big.bytes());
  EXPECT_FALSE(a.cross_endian);
  EXPECT_TRUE(b.cross_endian);
  EXPECT_TRUE(Check(a).empty()) << Dump(Check(a));
  EXPECT_TRUE(Check(b).empty()) << Dump(Check(b));
  EXPECT_EQ(b.header.version, 1u);
  EXPECT_EQ(b.header.total_size, 40u);
  EXPECT_EQ(b.header.pid, 4242u);
  EXPECT_EQ(b.header.timestamp, 1000u);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].id, b.records[i].id);
    EXPECT_EQ(a.records[i].total_size, b.records[i].total_size);
    EXPECT_EQ(a.records[i].timestamp, b.records[i].timestamp);
  }
  const LoadBody* la = a.records[2].load();
  const LoadBody* lb = b.records[2].load();
  ASSERT_NE(lb, nullptr);
  EXPECT_EQ(lb->code_addr, 0x10000u);
  EXPECT_EQ(lb->code_size, 0x100u);
  EXPECT_EQ(lb->code_index, 1u);
  EXPECT_EQ(lb->name, la->name);
  EXPECT_EQ(b.records[1].debug_info()->entries[1].addr, 0x10080u);
  EXPECT_EQ(b.records[1].debug_info()->entries[1].line, 31);
  const InlineBody& ia = *a.records[0].inline_info();
  const InlineBody& ib = *b.records[0].inline_info();
  ASSERT_EQ(ib.calls.size(), 2u);
  EXPECT_EQ(ib.calls[1].call_line_number, ia.calls[1].call_line_number);
  EXPECT_EQ(ib.ranges[2].start_offset, 0x40u);
  EXPECT_EQ(ib.lines[6].line_number, 33u);
  EXPECT_EQ(ib.files, ia.files);
  // And the queries agree.
  EXPECT_EQ(InlineChain(b, 2, 0x10045).size(), 3u);
}

// ---- malformed inputs ----

TEST(ReaderMalformed, EmptyAndShortFiles) {
  for (size_t n : {0, 1, 3}) {
    std::vector<uint8_t> bytes(n, 0x44);
    const JitDump dump = Parse(bytes);
    EXPECT_FALSE(dump.header_ok);
    EXPECT_TRUE(HasProblem(dump.problems, 0, Severity::kError, "too short")) << Dump(dump.problems);
  }
  Builder b;
  b.Header();
  std::vector<uint8_t> bytes = b.bytes();
  bytes.resize(20);
  const JitDump dump = Parse(bytes);
  EXPECT_FALSE(dump.header_ok);
  EXPECT_TRUE(HasProblem(dump.problems, 0, Severity::kError, "40-byte header")) << Dump(dump.problems);
}

TEST(ReaderMalformed, BadMagic) {
  Builder b;
  b.Header();
  b.bytes()[0] = 'X';
  const JitDump dump = Parse(b.bytes());
  EXPECT_FALSE(dump.header_ok);
  EXPECT_TRUE(HasProblem(dump.problems, 0, Severity::kError, "bad magic"));
  EXPECT_TRUE(dump.HasErrors());
}

TEST(ReaderMalformed, HeaderTotalSize) {
  {
    Builder b;
    b.Header(1, 39);
    const JitDump dump = Parse(b.bytes());
    EXPECT_FALSE(dump.header_ok);
    EXPECT_TRUE(HasProblem(dump.problems, 8, Severity::kError, "smaller than the 40-byte header"));
  }
  {
    Builder b;
    b.Header(1, 4000);  // writes 4000 bytes of header
    b.bytes().resize(100);
    const JitDump dump = Parse(b.bytes());
    EXPECT_FALSE(dump.header_ok);
    EXPECT_TRUE(HasProblem(dump.problems, 8, Severity::kError, "past the end"));
  }
  {
    // 48: readable (records start at 48), but perf 6.1 mis-skips the extra bytes.
    Builder b;
    b.Header(1, 48);
    const size_t load = b.Load(5, 0x1000, 8, 0, "f");
    const JitDump dump = Parse(b.bytes());
    ASSERT_TRUE(dump.header_ok);
    ASSERT_EQ(dump.records.size(), 1u);
    EXPECT_EQ(dump.records[0].offset, load);
    EXPECT_EQ(load, 48u);
    EXPECT_TRUE(HasProblem(Check(dump), 8, Severity::kError, "exactly 40"));
  }
}


TEST(ReaderMalformed, RecordTotalSizeBelow16IsAnErrorWithOffset) {
  Builder b;
  b.Header();
  b.Load(5, 0x1000, 8, 0, "f");
  const size_t bad = b.Begin(0, 6);
  b.PatchU32(bad + 4, 15);
  b.Zeros(64);
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, bad + 4, Severity::kError, "smaller than 16")) << Dump(dump.problems);
  EXPECT_EQ(dump.records.size(), 1u);
  EXPECT_TRUE(dump.HasErrors());
}

TEST(ReaderMalformed, TruncatedFinalRecordIsReportedNotAnError) {
  Builder b;
  b.Header();
  b.Load(5, 0x1000, 8, 0, "f");
  const size_t last = b.Load(6, 0x2000, 100, 1, "g");
  std::vector<uint8_t> bytes = b.bytes();
  bytes.resize(last + 70);  // a killed process: the final record is cut
  const JitDump dump = Parse(bytes);
  ASSERT_TRUE(dump.truncated_offset.has_value());
  EXPECT_EQ(*dump.truncated_offset, last);
  EXPECT_EQ(dump.truncated_bytes, 70u);
  EXPECT_EQ(dump.truncated_needed, 56u + 2 + 100);
  EXPECT_EQ(dump.records.size(), 1u);
  EXPECT_FALSE(dump.HasErrors()) << Dump(dump.problems);
  EXPECT_EQ(Count(Check(dump), Severity::kError), 0u);
  EXPECT_TRUE(HasProblem(Check(dump), last, Severity::kWarning, "truncated"));

  bytes.resize(last + 9);  // not even a record header
  const JitDump tiny = Parse(bytes);
  ASSERT_TRUE(tiny.truncated_offset.has_value());
  EXPECT_EQ(*tiny.truncated_offset, last);
  EXPECT_EQ(tiny.truncated_bytes, 9u);
  EXPECT_FALSE(tiny.HasErrors());
}

TEST(ReaderMalformed, CodeLoadSizesBoundedByTheRecord) {
  {
    Builder b;
    b.Header();
    const size_t at = b.Load(5, 0x1000, 8, 0, "f");
    b.PatchU64(at + 40, 1ull << 40);  // code_size past the record (and the file)
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, at + 40, Severity::kError, "code_size")) << Dump(dump.problems);
    EXPECT_FALSE(dump.records[0].valid);
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Begin(0, 5);
    b.U32(1).U32(1).U64(0x1000).U64(0x1000).U64(4).U64(0).Raw("nameXXXX");  // no NUL at all
    b.End(at);
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, at + 56, Severity::kError, "no NUL")) << Dump(dump.problems);
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Begin(0, 5);
    b.U32(1).U32(1).U64(0x1000);  // 32 bytes: shorter than the fixed part
    b.End(at);
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, at + 4, Severity::kError, "fixed part")) << Dump(dump.problems);
  }
}

TEST(ReaderMalformed, DebugInfoNrEntryLargerThanTheRecord) {
  Builder b;
  b.Header();
  const size_t at = b.DebugInfo(5, 0x1000, {{0x1000, 1, 0, "A.java"}});
  b.PatchU64(at + 24, uint64_t{1} << 62);  // must not allocate
  b.Load(6, 0x1000, 8, 0, "f");
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, at + 24, Severity::kError, "nr_entry")) << Dump(dump.problems);
  // Parsing continues after the record: total_size bounds it.
  EXPECT_EQ(dump.records.size(), 2u);
  EXPECT_NE(dump.records[1].load(), nullptr);

  Builder c;
  c.Header();
  const size_t at2 = c.Begin(2, 5);
  c.U64(0x1000).U64(3);  // room for three 17-byte entries, but the third is only 8 bytes of padding
  c.U64(0x1000).U32(1).U32(0).Str("A.java").U64(0x1004).U32(2).U32(0).Str("A.java").Zeros(8);
  c.End(at2);
  const JitDump dump2 = Parse(c.bytes());
  const uint64_t third = at2 + 32 + 2 * (16 + 7);
  EXPECT_TRUE(HasProblem(dump2.problems, third, Severity::kError, "entry 2 of 3 runs past")) << Dump(dump2.problems);
}

TEST(ReaderMalformed, DebugInfoFileNameWithoutNul) {
  Builder b;
  b.Header();
  const size_t at = b.Begin(2, 5);
  b.U64(0x1000).U64(1).U64(0x1000).U32(3).U32(0).Raw("A.java");  // no terminating NUL
  b.End(at);
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, at + 48, Severity::kError, "no NUL")) << Dump(dump.problems);
}

TEST(ReaderMalformed, DebugInfoCorruptedNameIsAWarningAndBoundedByTotalSize) {
  // node/V8: garbage name with an embedded NUL; nr_entry walking is out of step.
  Builder b;
  b.Header();
  const size_t at = b.Begin(2, 5);
  b.U64(0x1000).U64(3).U64(0x1040).U32(1).U32(19).Raw(std::string_view("v\xa4\x03\0\x7f\x12garbage", 13));
  b.U64(0xdeadbeefdeadbeef).U32(7).U32(7).Str("x").Zeros(8);
  b.End(at);
  b.Load(6, 0x1000, 0x100, 0, "JS:*fib");
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, at + 48, Severity::kWarning, "corrupted file name")) << Dump(dump.problems);
  EXPECT_FALSE(dump.HasErrors()) << Dump(dump.problems);
  ASSERT_EQ(dump.records.size(), 2u);
  EXPECT_NE(dump.records[1].load(), nullptr);
  EXPECT_EQ(Count(Check(dump), Severity::kError), 0u) << Dump(Check(dump));
}

TEST(ReaderMalformed, UnwindingSizes) {
  Builder b;
  b.Header();
  const size_t at = b.Unwinding(5, "12345678", 4, 0);
  b.PatchU64(at + 16, 9);
  const size_t at2 = b.Unwinding(5, "12345678", 16, 0);
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, at + 16, Severity::kError, "unwind_data_size")) << Dump(dump.problems);
  EXPECT_TRUE(HasProblem(dump.problems, at2 + 24, Severity::kError, "eh_frame_hdr_size")) << Dump(dump.problems);
}

TEST(ReaderMalformed, UnknownRecordTypesAreSkippedAndCounted) {
  Builder b;
  b.Header();
  const size_t u = b.Begin(99, 5);
  b.Raw("whatever payload");
  b.End(u);
  const size_t t = b.Begin(827346260, 5);  // SAMPLY_JIT_TIER
  b.U32(1);
  b.End(t);
  b.Load(6, 0x1000, 8, 0, "f");
  const JitDump dump = Parse(b.bytes());
  EXPECT_EQ(dump.unknown_records, 2u);
  ASSERT_EQ(dump.records.size(), 3u);
  EXPECT_NE(dump.records[2].load(), nullptr);
  EXPECT_TRUE(Check(dump).empty()) << Dump(Check(dump));
}

// ---- the samply record ----

TEST(ReaderSamply, ValidRecordHasNoProblems) {
  const Builder b = SamplyWith({{0, 1, 1, 3, 0}, {1, 2, 2, 4, 0}, {0, 1, 2, 9, 0}},
                               {{0, 0x40}, {0x8, 0x8}, {0x20, 0x8}, {0x50, 0x10}},
                               {{0, 0, 1, 0}, {0x8, 1, 2, 0}, {0x50, 1, 3, 0}});
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(Check(dump).empty()) << Dump(Check(dump));
  EXPECT_EQ(dump.records[0].inline_info()->max_depth, 2u);
  EXPECT_EQ(dump.records[0].inline_info()->range_begin, (std::vector<uint32_t>{0, 1, 3}));
}

TEST(ReaderSamply, IndexOutOfRange) {
  Builder b;
  b.Header();
  b.Samply(5, {"A.java"}, {"a"}, {{0, 0, 1, 0, 0}, {1, 0, 1, 0, 0}, {0, 2, 1, 0, 0}}, {{0, 1, 7, 1, 0}},
           {{0, 4}}, {{0, 3, 1, 0}});
  b.Load(6, 0x1000, 0x100, 0, "a");
  const JitDump dump = Parse(b.bytes());
  const size_t functions = kSamplyAt + 48 + 8 + 4;
  const size_t calls = functions + 3 * 20;
  const size_t lines = calls + 20 + 8;
  EXPECT_TRUE(HasProblem(dump.problems, functions + 20, Severity::kError, "function 1: function_name_index 1"))
      << Dump(dump.problems);
  EXPECT_TRUE(HasProblem(dump.problems, functions + 40 + 4, Severity::kError, "function 2: file_index 2"));
  EXPECT_TRUE(HasProblem(dump.problems, calls + 8, Severity::kError, "function_index 7"));
  EXPECT_TRUE(HasProblem(dump.problems, lines + 4, Severity::kError, "line record 0: file_index 3"));
  EXPECT_FALSE(dump.records[0].valid);
}

TEST(ReaderSamply, DepthsMustFormADfsOrder) {
  const JitDump first_not_zero = Parse(SamplyWith({{1, 1, 1, 3, 0}}, {{0, 4}}, {}).bytes());
  EXPECT_TRUE(HasProblem(first_not_zero.problems, kCallsAt, Severity::kError, "depth 1 (must be 0)"))
      << Dump(first_not_zero.problems);
  const JitDump jump = Parse(SamplyWith({{0, 1, 1, 3, 0}, {2, 1, 2, 3, 0}}, {{0, 8}, {0, 4}}, {}).bytes());
  EXPECT_TRUE(HasProblem(jump.problems, kCallsAt + 20, Severity::kError, "deeper than previous"))
      << Dump(jump.problems);
  const JitDump zero_ranges = Parse(SamplyWith({{0, 0, 1, 3, 0}}, {}, {}).bytes());
  EXPECT_TRUE(HasProblem(zero_ranges.problems, kCallsAt + 4, Severity::kError, "range_count 0"));
}

TEST(ReaderSamply, ChildRangeOutsideItsCallerIsAWarning) {
  // call 1 (depth 1) has [0x30, +0x20), outside its caller's [0x0, +0x20).
  const JitDump dump = Parse(SamplyWith({{0, 1, 1, 3, 0}, {1, 1, 2, 4, 0}}, {{0, 0x20}, {0x30, 0x20}}, {}).bytes());
  const size_t ranges = kCallsAt + 2 * 20;
  EXPECT_TRUE(HasProblem(dump.problems, ranges + 8, Severity::kWarning, "not inside a range of its caller"))
      << Dump(dump.problems);
  EXPECT_FALSE(dump.HasErrors());
}

TEST(ReaderSamply, ChildRangeInsideAnyOfItsCallersRangesIsFine) {
  // The caller's ranges out of order, nested and apart: the child's first two ranges each lie
  // inside one of them; its third spans two of them, inside neither: the one warning.
  const JitDump dump = Parse(SamplyWith({{0, 3, 1, 3, 0}, {1, 3, 2, 4, 0}},
                                        {{0x40, 0x10}, {0x0, 0x30}, {0x10, 0x8}, {0x20, 0x8}, {0x44, 0x4}, {0x28, 0x20}},
                                        {})
                                 .bytes());
  const size_t ranges = kCallsAt + 2 * 20;
  size_t warnings = 0;
  for (const Problem& p : dump.problems) warnings += p.message.find("not inside a range") != std::string::npos;
  EXPECT_EQ(warnings, 1u) << Dump(dump.problems);
  EXPECT_TRUE(HasProblem(dump.problems, ranges + 5 * 8, Severity::kWarning, "range [0x28, +0x20) is not inside"))
      << Dump(dump.problems);
}

TEST(ReaderSamply, RangeCountSumMustMatch) {
  const JitDump dump = Parse(SamplyWith({{0, 2, 1, 3, 0}}, {{0, 4}, {8, 4}, {12, 4}}, {}).bytes());
  EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + testing::kSamplyRangeCount, Severity::kError,
                         "use 2 ranges but range_count is 3"))
      << Dump(dump.problems);
}

TEST(ReaderSamply, LineRecordsMustBeSorted) {
  const JitDump dump = Parse(SamplyWith({}, {}, {{0x10, 0, 1, 0}, {0x8, 0, 2, 0}}).bytes());
  const size_t lines = kCallsAt;
  EXPECT_TRUE(HasProblem(dump.problems, lines + 16, Severity::kError, "sorted")) << Dump(dump.problems);
}

TEST(ReaderSamply, PaddingAndListSizes) {
  {
    Builder b = SamplyWith({}, {}, {});
    b.PatchU32(kSamplyAt + testing::kSamplyFileListSize, 15);
    const JitDump dump = Parse(b.bytes());
    // 15 is not a multiple of 4 (and the lists no longer add up exactly: reported first or this)
    EXPECT_TRUE(dump.HasErrors());
    EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + 20, Severity::kError, "multiple of 4") ||
                HasProblem(dump.problems, kSamplyAt + 16, Severity::kError))
        << Dump(dump.problems);
  }
  {
    // file_count says 1: "A.java\0" is 7 bytes, padded to 8, but the list claims 16.
    Builder b = SamplyWith({}, {}, {});
    b.PatchU32(kSamplyAt + testing::kSamplyFileCount, 1);
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + 48, Severity::kError, "does not match its strings"))
        << Dump(dump.problems);
  }
  {
    // A string running through the padding without a NUL.
    Builder b = SamplyWith({}, {}, {});
    b.bytes()[kSamplyAt + 48 + 13] = 'x';  // B.java's NUL
    b.bytes()[kSamplyAt + 48 + 14] = 'x';
    b.bytes()[kSamplyAt + 48 + 15] = 'x';
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + 48 + 7, Severity::kError, "string 1 has no NUL"))
        << Dump(dump.problems);
  }
  {
    // Non-zero padding: a warning.
    Builder b = SamplyWith({}, {}, {});
    b.bytes()[kSamplyAt + 48 + 15] = 'x';
    const JitDump dump = Parse(b.bytes());
    EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + 48 + 15, Severity::kWarning, "padding")) << Dump(dump.problems);
    EXPECT_FALSE(dump.HasErrors());
  }
}

TEST(ReaderSamply, HugeCountsAreRejectedWithoutAllocating) {
  Builder b = SamplyWith({}, {}, {});
  for (size_t field = 16; field < 48; field += 4) {
    if (field == 20 || field == 28) continue;
    b.PatchU32(kSamplyAt + field, 0xFFFFFFFF);
  }
  const JitDump dump = Parse(b.bytes());
  EXPECT_TRUE(HasProblem(dump.problems, kSamplyAt + 16, Severity::kError, "lists need")) << Dump(dump.problems);
}

}  // namespace
}  // namespace jitdump
