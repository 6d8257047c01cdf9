// The method table beside a dump (jitdump/write/method_table_file.h writes it, jitdump/read/
// method_table.h reads it): records round-trip, Find follows reuse and retirement by time,
// line lookups follow the agent's rule, and damaged or hostile bytes give what can be read,
// never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cpp-tests/temp_dir_test.h"
#include "jitdump/write/method_table_file.h"
#include "jitdump/read/method_table.h"

namespace jitdump {
namespace {

MethodTableLayout X86Layout() {
  MethodTableLayout layout;
  layout.elf_machine = 62;
  layout.jvm_feature = 17;
  layout.method_slot = -3;
  layout.bcp_slot = -8;
  layout.complete_slot = -9;
  layout.bcp_register = kPerfRegX86R13;
  layout.method_register = kPerfRegX86Bx;
  layout.jvm_version = "17.0.21+2";
  return layout;
}

// A table's bytes: header, LAYOUT, then whatever `add` appends.
template <typename Add>
std::vector<uint8_t> TableBytes(Add add) {
  const MethodTableHeader header = MakeMethodTableHeader(4242, 100);
  std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(&header),
                             reinterpret_cast<const uint8_t*>(&header) + sizeof header);
  EXPECT_TRUE(AppendLayoutRecord(bytes, 100, X86Layout()));
  add(bytes);
  return bytes;
}

MethodTableMethod Method(uint64_t serial, uint64_t ptr, uint64_t time, std::string_view name,
                         std::span<const MethodTableLine> lines = {}) {
  MethodTableMethod m;
  m.timestamp = time;
  m.serial = serial;
  m.method = ptr;
  m.code_base = ptr + 0x100;
  m.code_size = 40;
  m.class_id = 7;
  m.name = name;
  m.descriptor = "(I)V";
  m.lines = lines;
  return m;
}

TEST(MethodTable, RoundTripsEveryRecord) {
  const MethodTableLine lines[] = {{0, 31}, {7, 32}, {19, 33}, {38, 31}};
  const std::vector<uint8_t> bytes = TableBytes([&](std::vector<uint8_t>& out) {
    ASSERT_TRUE(AppendClassRecord(out, {200, 7, "probe.Chain", "probe/Chain.java"}));
    ASSERT_TRUE(AppendMethodRecord(out, Method(1, 0x7f0000001000, 200, "inner", lines)));
    AppendRetireRecord(out, 900, 1, 0x7f0000001000);
  });
  const MethodTable table = ParseMethodTable(bytes);
  ASSERT_TRUE(table.header_ok) << (table.problems.empty() ? "" : table.problems[0].message);
  EXPECT_TRUE(table.problems.empty()) << table.problems[0].message;
  EXPECT_EQ(table.header.pid, 4242u);
  ASSERT_TRUE(table.layout);
  EXPECT_EQ(table.layout->method_slot, -3);
  EXPECT_EQ(table.layout->bcp_slot, -8);
  EXPECT_EQ(table.layout->complete_slot, -9);
  EXPECT_EQ(table.layout->bcp_register, kPerfRegX86R13);
  EXPECT_EQ(table.layout->jvm_version, "17.0.21+2");
  ASSERT_EQ(table.classes.size(), 1u);
  EXPECT_EQ(table.classes[0].name, "probe.Chain");
  EXPECT_EQ(table.classes[0].file, "probe/Chain.java");
  ASSERT_EQ(table.methods.size(), 1u);
  const TableMethod& m = table.methods[0];
  EXPECT_EQ(m.name, "inner");
  EXPECT_EQ(m.descriptor, "(I)V");
  EXPECT_EQ(m.code_base, 0x7f0000001100u);
  EXPECT_EQ(m.code_size, 40u);
  EXPECT_EQ(m.retired, 900u);
  ASSERT_NE(table.ClassOf(m), nullptr);
  EXPECT_EQ(table.ClassOf(m)->name, "probe.Chain");
  EXPECT_EQ(m.LineAt(0), 31u);
  EXPECT_EQ(m.LineAt(6), 31u);
  EXPECT_EQ(m.LineAt(7), 32u);
  EXPECT_EQ(m.LineAt(20), 33u);
  EXPECT_EQ(m.LineAt(44), 31u);
  EXPECT_FALSE(table.ended);
}

TEST(MethodTable, FindTakesTheLatestRecordAtTheTimeUnlessRetired) {
  const std::vector<uint8_t> bytes = TableBytes([&](std::vector<uint8_t>& out) {
    ASSERT_TRUE(AppendClassRecord(out, {0, 7, "A", "A.java"}));
    ASSERT_TRUE(AppendMethodRecord(out, Method(1, 0x1000, 0, "first")));  // since before the table
    AppendRetireRecord(out, 500, 1, 0x1000);                               // its class unloaded
    ASSERT_TRUE(AppendMethodRecord(out, Method(2, 0x1000, 700, "reused")));  // the memory reused
    ASSERT_TRUE(AppendMethodRecord(out, Method(3, 0x2000, 300, "other")));
  });
  const MethodTable table = ParseMethodTable(bytes);
  ASSERT_TRUE(table.header_ok);
  ASSERT_NE(table.Find(0x1000, 10), nullptr);
  EXPECT_EQ(table.Find(0x1000, 10)->name, "first");
  EXPECT_EQ(table.Find(0x1000, 499)->name, "first");
  EXPECT_EQ(table.Find(0x1000, 500), nullptr) << "retired at 500";
  EXPECT_EQ(table.Find(0x1000, 699), nullptr);
  ASSERT_NE(table.Find(0x1000, 700), nullptr);
  EXPECT_EQ(table.Find(0x1000, 700)->name, "reused");
  EXPECT_EQ(table.Find(0x2000, 299), nullptr) << "prepared at 300";
  EXPECT_EQ(table.Find(0x2000, 300)->name, "other");
  EXPECT_EQ(table.Find(0x3000, 300), nullptr);
  EXPECT_EQ(table.Find(0x1000, std::nullopt)->name, "reused") << "no clock: the latest";
  EXPECT_TRUE(table.Knows(0x2000));
  EXPECT_FALSE(table.Knows(0x3000));
}

class MethodTableFileTest : public TempDirTest {};

TEST_F(MethodTableFileTest, AppendsWholeRecordsAndEnds) {
  const std::string path = dir_ + "/jit-4242.dump.methods";
  MethodTableFile file;
  ASSERT_TRUE(file.Create(path, 0600, 4242, 100).ok());
  std::vector<uint8_t> records;
  ASSERT_TRUE(AppendLayoutRecord(records, 100, X86Layout()));
  ASSERT_TRUE(AppendClassRecord(records, {0, 7, "A", ""}));
  ASSERT_TRUE(AppendMethodRecord(records, Method(1, 0x1000, 0, "m")));
  ASSERT_TRUE(file.Append(records).ok());
  ASSERT_TRUE(file.Close(1000, {1, 1, 0, 3}).ok());
  EXPECT_TRUE(file.Close(1000, {}).ok()) << "twice";
  MethodTable table;
  std::string error;
  ASSERT_TRUE(LoadMethodTable(path, 1 << 20, &table, &error)) << error;
  EXPECT_TRUE(table.problems.empty()) << table.problems[0].message;
  EXPECT_TRUE(table.ended);
  EXPECT_EQ(table.end_counts.methods, 1u);
  EXPECT_EQ(table.end_counts.methods_lost, 3u);
  ASSERT_EQ(table.methods.size(), 1u);
  EXPECT_TRUE(table.classes[0].file.empty());
  EXPECT_EQ(MethodTablePathFor(dir_ + "/jit-4242.dump"), path);
}

TEST_F(MethodTableFileTest, LoadRefusesSymlinksAndTooLargeFiles) {
  const std::string path = dir_ + "/t.methods";
  MethodTableFile file;
  ASSERT_TRUE(file.Create(path, 0600, 1, 1).ok());
  ASSERT_TRUE(file.Close(2, {}).ok());
  ASSERT_EQ(::symlink(path.c_str(), (dir_ + "/link.methods").c_str()), 0);
  MethodTable table;
  std::string error;
  EXPECT_FALSE(LoadMethodTable(dir_ + "/link.methods", 1 << 20, &table, &error));
  EXPECT_FALSE(LoadMethodTable(path, 16, &table, &error));
  EXPECT_NE(error.find("larger than"), std::string::npos) << error;
  EXPECT_FALSE(LoadMethodTable(dir_, 1 << 20, &table, &error)) << "a directory";
}

TEST(MethodTable, ATableCutAnywhereGivesItsWholeRecords) {
  const MethodTableLine lines[] = {{0, 1}, {4, 2}};
  const std::vector<uint8_t> bytes = TableBytes([&](std::vector<uint8_t>& out) {
    ASSERT_TRUE(AppendClassRecord(out, {0, 7, "A", "A.java"}));
    for (uint64_t i = 1; i <= 5; ++i) ASSERT_TRUE(AppendMethodRecord(out, Method(i, 0x1000 * i, i, "m", lines)));
  });
  const size_t whole = ParseMethodTable(bytes).methods.size();
  ASSERT_EQ(whole, 5u);
  std::vector<size_t> boundaries{sizeof(MethodTableHeader)};
  while (boundaries.back() < bytes.size()) {
    uint32_t size;
    std::memcpy(&size, bytes.data() + boundaries.back() + 4, sizeof size);
    boundaries.push_back(boundaries.back() + size);
  }
  size_t last = 0;
  for (size_t cut = sizeof(MethodTableHeader); cut <= bytes.size(); ++cut) {
    const MethodTable table = ParseMethodTable(std::span<const uint8_t>(bytes.data(), cut));
    ASSERT_TRUE(table.header_ok);
    EXPECT_GE(table.methods.size(), last) << "cut at " << cut;
    last = table.methods.size();
    const bool on_boundary = std::find(boundaries.begin(), boundaries.end(), cut) != boundaries.end();
    EXPECT_EQ(table.truncated_offset.has_value(), !on_boundary) << "cut at " << cut;
  }
  EXPECT_EQ(last, whole);
}

TEST(MethodTable, HostileSizesAreRefusedWithTheirOffset) {
  std::vector<uint8_t> bytes = TableBytes([&](std::vector<uint8_t>& out) {
    ASSERT_TRUE(AppendClassRecord(out, {0, 7, "A", "A.java"}));
    ASSERT_TRUE(AppendMethodRecord(out, Method(1, 0x1000, 0, "ok")));
    ASSERT_TRUE(AppendMethodRecord(out, Method(2, 0x2000, 0, "bad")));
  });
  // The second method claims 2^32-1 line entries: its record cannot hold them.
  const size_t second = bytes.size() - ((sizeof(MethodTableMethodFixed) + 3 + 4 + 7) / 8 * 8);
  const uint32_t huge = UINT32_MAX;
  std::memcpy(bytes.data() + second + offsetof(MethodTableMethodFixed, line_count), &huge, sizeof huge);
  MethodTable table = ParseMethodTable(bytes);
  ASSERT_EQ(table.methods.size(), 1u);
  EXPECT_EQ(table.methods[0].name, "ok");
  ASSERT_FALSE(table.problems.empty());
  EXPECT_EQ(table.problems[0].offset, second);
  // A record size that is not a multiple of 8 stops the reading there.
  const uint32_t odd = 17;
  std::memcpy(bytes.data() + second + 4, &odd, sizeof odd);
  table = ParseMethodTable(bytes);
  EXPECT_EQ(table.methods.size(), 1u);
  // Not a table at all; a future version; a header size past the file.
  std::vector<uint8_t> other = bytes;
  other[0] ^= 0xff;
  EXPECT_FALSE(ParseMethodTable(other).header_ok);
  other = bytes;
  other[4] = 9;
  EXPECT_FALSE(ParseMethodTable(other).header_ok);
  other = bytes;
  const uint32_t big = 1 << 30;
  std::memcpy(other.data() + 8, &big, sizeof big);
  EXPECT_FALSE(ParseMethodTable(other).header_ok);
  EXPECT_FALSE(ParseMethodTable({}).header_ok);
}

TEST(MethodTable, AnUnusableLayoutIsReported) {
  MethodTableLayout layout = X86Layout();
  layout.method_slot = 1000;
  const MethodTableHeader header = MakeMethodTableHeader(1, 1);
  std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(&header),
                             reinterpret_cast<const uint8_t*>(&header) + sizeof header);
  ASSERT_TRUE(AppendLayoutRecord(bytes, 1, layout));
  const MethodTable table = ParseMethodTable(bytes);
  EXPECT_TRUE(table.header_ok);
  EXPECT_FALSE(table.layout);
  EXPECT_FALSE(table.problems.empty());
}

TEST(MethodTable, ACrossEndianTableReadsTheSame) {
  const MethodTableLine lines[] = {{0, 10}, {5, 11}};
  const std::vector<uint8_t> bytes = TableBytes([&](std::vector<uint8_t>& out) {
    ASSERT_TRUE(AppendClassRecord(out, {0, 7, "A", "A.java"}));
    ASSERT_TRUE(AppendMethodRecord(out, Method(1, 0x1000, 50, "m", lines)));
  });
  // Swap every 4- or 8-byte field by hand, record by record.
  std::vector<uint8_t> swapped = bytes;
  auto swap32 = [&](size_t at) { std::reverse(swapped.begin() + at, swapped.begin() + at + 4); };
  auto swap64 = [&](size_t at) { std::reverse(swapped.begin() + at, swapped.begin() + at + 8); };
  for (size_t at : {0, 4, 8, 12}) swap32(at);
  for (size_t at : {16, 24, 32}) swap64(at);
  size_t at = sizeof(MethodTableHeader);
  while (at < bytes.size()) {
    MethodTableRecordHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof h);
    swap32(at);
    swap32(at + 4);
    swap64(at + 8);
    if (h.type == static_cast<uint32_t>(MethodTableRecord::kLayout)) {
      for (size_t f = 16; f < sizeof(MethodTableLayoutFixed); f += 4) swap32(at + f);
    } else if (h.type == static_cast<uint32_t>(MethodTableRecord::kClass)) {
      swap64(at + 16);
      swap32(at + 24);
      swap32(at + 28);
    } else if (h.type == static_cast<uint32_t>(MethodTableRecord::kMethod)) {
      for (size_t f = 16; f < 48; f += 8) swap64(at + f);
      for (size_t f = 48; f < 72; f += 4) swap32(at + f);
      for (size_t l = 0; l < 2; ++l) {
        swap32(at + 72 + 8 * l);
        swap32(at + 76 + 8 * l);
      }
    }
    at += h.size;
  }
  const MethodTable table = ParseMethodTable(swapped);
  ASSERT_TRUE(table.header_ok);
  EXPECT_TRUE(table.cross_endian);
  ASSERT_EQ(table.methods.size(), 1u);
  EXPECT_EQ(table.methods[0].method, 0x1000u);
  EXPECT_EQ(table.methods[0].LineAt(6), 11u);
  EXPECT_EQ(table.Find(0x1000, 60)->name, "m");
  EXPECT_EQ(table.classes[0].name, "A");
  EXPECT_EQ(table.layout->bcp_slot, -8);
}

}  // namespace
}  // namespace jitdump
