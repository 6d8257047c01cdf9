// The writer thread's method table (agent/core/method_table_writer.h) over a fake JVM side: what it
// writes is read back with the read half (jitdump/read/method_table.h). Classes become CLASS and
// METHOD records stamped with their ClassPrepare time (0: before the table); a method met twice
// is written once; a Method* HotSpot reuses for another method is written again; the sweep
// retires what was unloaded and writes redefined methods again, stamped no earlier than what
// they replace; a failed write counts the methods lost and leaves the table whole.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "agent/core/method_table_writer.h"
#include "cpp-tests/temp_dir_test.h"
#include "jitdump/read/method_table.h"

namespace jitdump_agent {
namespace {

// The JVM: method ids point at Method*s the test moves around.
class FakeSource : public MethodSource {
 public:
  bool DescribePinned(ClassPin, ClassMethods*) override { return false; }
  void DescribeLoaded(const std::function<void(const ClassMethods&)>& each) override {
    for (const ClassMethods& c : loaded) each(c);
  }
  uint64_t CurrentMethod(MethodId id) override { return slots.count(id) ? slots[id] : 0; }
  bool DescribeClassOf(MethodId id, ClassMethods* out) override {
    ++describe_class_calls;
    const auto it = redefined.find(id);
    if (it == redefined.end()) return false;
    *out = it->second;
    return true;
  }

  std::vector<ClassMethods> loaded;
  std::map<MethodId, uint64_t> slots;          // method id -> current Method*
  std::map<MethodId, ClassMethods> redefined;  // what DescribeClassOf answers, by method id
  int describe_class_calls = 0;
};

ClassMethods::Method M(MethodId id, uint64_t method, const char* name, uint32_t code_size = 10) {
  ClassMethods::Method m;
  m.id = id;
  m.method = method;
  m.code_base = method + 0x800;
  m.code_size = code_size;
  m.name = name;
  m.descriptor = "()V";
  m.lines = {{0, 5}, {4, 6}};
  return m;
}

ClassMethods Class(const char* name, std::vector<ClassMethods::Method> methods) {
  ClassMethods c;
  c.name = name;
  c.file = std::string(name) + ".java";
  c.methods = std::move(methods);
  return c;
}

class MethodTableWriterTest : public TempDirTest {
 protected:
  void Open(uint64_t now = 100) {
    jitdump::HeldDirectory dir;
    ASSERT_TRUE(dir.Open(dir_, 0700).ok());
    InterpreterLayout layout;
    layout.jvm_feature = 17;
    ASSERT_TRUE(writer_.Open(dir, "jit-1.dump.methods", {O_WRONLY, 0600, 0}, 1, now, layout, "17.0.21").ok());
  }
  jitdump::MethodTable Read() {
    jitdump::MethodTable table;
    std::string error;
    EXPECT_TRUE(jitdump::LoadMethodTable(dir_ + "/jit-1.dump.methods", 1 << 24, &table, &error)) << error;
    return table;
  }
  std::vector<const jitdump::TableMethod*> Named(const jitdump::MethodTable& table, const std::string& name) {
    std::vector<const jitdump::TableMethod*> out;
    for (const jitdump::TableMethod& m : table.methods) {
      if (m.name == name) out.push_back(&m);
    }
    return out;
  }

  Stats stats_;
  MethodTableWriter writer_{stats_};
  FakeSource source_;
};

TEST_F(MethodTableWriterTest, ClassesAreWrittenWithTheirMethodsOnce) {
  Open();
  writer_.AddClass(0, Class("A", {M(1, 0x1000, "a1"), M(2, 0x2000, "a2")}));
  writer_.AddClass(500, Class("B", {M(3, 0x3000, "b")}));
  writer_.AddClass(600, Class("A", {M(1, 0x1000, "a1"), M(2, 0x2000, "a2")}));  // listed and prepared
  ASSERT_TRUE(writer_.Flush().ok());
  ASSERT_TRUE(writer_.Close(1000).ok());
  const jitdump::MethodTable table = Read();
  EXPECT_TRUE(table.problems.empty()) << table.problems[0].message;
  ASSERT_TRUE(table.layout);
  EXPECT_EQ(table.layout->jvm_version, "17.0.21");
  ASSERT_EQ(table.methods.size(), 3u);
  EXPECT_EQ(table.classes.size(), 2u) << "no CLASS record for a class whose methods were all written before";
  EXPECT_EQ(table.Find(0x1000, 10)->name, "a1");
  EXPECT_EQ(table.ClassOf(*table.Find(0x1000, 10))->name, "A");
  EXPECT_EQ(table.ClassOf(*table.Find(0x1000, 10))->file, "A.java");
  EXPECT_EQ(table.Find(0x3000, 499), nullptr) << "B was prepared at 500";
  EXPECT_EQ(table.Find(0x3000, 500)->name, "b");
  EXPECT_EQ(table.Find(0x1000, 10)->LineAt(5), 6u);
  EXPECT_TRUE(table.ended);
  EXPECT_EQ(table.end_counts.methods, 3u);
  EXPECT_EQ(stats_.method_table_methods.Get(), 3u);
}

TEST_F(MethodTableWriterTest, UnloadsAreRetiredAndReusedMemoryWrittenAgain) {
  Open();
  writer_.AddClass(0, Class("A", {M(1, 0x1000, "a"), M(2, 0x2000, "keep")}));
  source_.slots = {{1, 0x1000}, {2, 0x2000}};
  writer_.Sweep(3'000'000'000, source_);  // nothing moved
  source_.slots[1] = 0;                    // A's first method: its class unloaded
  writer_.Sweep(6'000'000'000, source_);
  writer_.AddClass(7'000'000'000, Class("B", {M(5, 0x1000, "b")}));  // HotSpot reuses the memory
  // And reuse before any sweep saw the unload: the newer method replaces the tracked one.
  writer_.AddClass(8'000'000'000, Class("C", {M(6, 0x2000, "c")}));
  ASSERT_TRUE(writer_.Close(9'000'000'000).ok());
  const jitdump::MethodTable table = Read();
  EXPECT_EQ(table.Find(0x1000, 5'000'000'000)->name, "a");
  EXPECT_EQ(table.Find(0x1000, 6'500'000'000), nullptr) << "retired at the sweep";
  EXPECT_EQ(table.Find(0x1000, 7'000'000'000)->name, "b");
  EXPECT_EQ(table.Find(0x2000, 7'999'999'999)->name, "keep");
  EXPECT_EQ(table.Find(0x2000, 8'000'000'000)->name, "c");
  EXPECT_EQ(stats_.method_table_retired.Get(), 1u);
  EXPECT_EQ(table.end_counts.retired, 1u);
  EXPECT_EQ(stats_.method_table_sweeps.Get(), 2u);
}

TEST_F(MethodTableWriterTest, RedefinedMethodsAreWrittenAgainNoOlderThanWhatTheyReplace) {
  Open(100);
  writer_.AddClass(5'000'000'000, Class("A", {M(1, 0x1000, "m", 10)}));
  source_.slots = {{1, 0x1000}};
  ClassMethods v2 = Class("A", {M(1, 0x9000, "m", 14)});
  v2.methods[0].lines = {{0, 5}, {6, 7}};
  source_.redefined[1] = v2;
  source_.slots[1] = 0x9000;  // redefined
  writer_.Sweep(6'000'000'000, source_);
  // The redefinition happened after the last sweep (the table's start) and after A's record.
  writer_.AddClass(0, Class("A", {M(1, 0x9000, "m", 14)}));  // seen again: nothing new
  ASSERT_TRUE(writer_.Close(7'000'000'000).ok());
  const jitdump::MethodTable table = Read();
  const auto m = Named(table, "m");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]->method, 0x1000u);
  EXPECT_EQ(m[0]->retired, UINT64_MAX) << "the old version may still run in frames that hold it";
  EXPECT_EQ(m[1]->method, 0x9000u);
  EXPECT_EQ(m[1]->flags & jitdump::kMethodRedefined, jitdump::kMethodRedefined);
  EXPECT_EQ(m[1]->code_size, 14u);
  EXPECT_EQ(m[1]->LineAt(6), 7u);
  EXPECT_GT(m[1]->timestamp, 5'000'000'000u);
  EXPECT_LE(m[1]->timestamp, 6'000'000'000u);
  EXPECT_EQ(stats_.method_table_redefined.Get(), 1u);
  // A redefinition the source cannot describe is counted lost, not written.
  EXPECT_EQ(stats_.method_table_methods_lost.Get(), 0u);
}

TEST_F(MethodTableWriterTest, ARedefinedClassIsDescribedWholeOnce) {
  Open(100);
  writer_.AddClass(5'000'000'000, Class("A", {M(1, 0x1000, "a"), M(2, 0x2000, "b"), M(3, 0x3000, "c")}));
  source_.slots = {{1, 0x1000}, {2, 0x2000}, {3, 0x3000}};
  // Redefined: a's and b's ids moved to new Method*s, c's id stayed where it was but the class
  // now has a method d it did not have (an instrumenting agent's renamed original, say).
  source_.slots[1] = 0x9100;
  source_.slots[2] = 0x9200;
  const ClassMethods now = Class("A", {M(1, 0x9100, "a"), M(2, 0x9200, "b"), M(3, 0x3000, "c"), M(4, 0x9400, "d")});
  source_.redefined[1] = now;
  source_.redefined[2] = now;
  writer_.Sweep(6'000'000'000, source_);
  EXPECT_EQ(source_.describe_class_calls, 1) << "the class once, not once per moved method";
  EXPECT_EQ(stats_.method_table_redefined.Get(), 3u) << "a, b and the new d; c is unchanged";
  ASSERT_TRUE(writer_.Close(7'000'000'000).ok());
  const jitdump::MethodTable table = Read();
  EXPECT_EQ(table.Find(0x9400, 6'000'000'000)->name, "d");
  EXPECT_EQ(table.Find(0x9100, 6'000'000'000)->name, "a");
  EXPECT_EQ(table.Find(0x3000, 6'000'000'000)->name, "c");
  EXPECT_EQ(Named(table, "c").size(), 1u);
  EXPECT_EQ(Named(table, "a").size(), 2u);
  EXPECT_GT(table.Find(0x9400, 6'000'000'000)->timestamp, 5'000'000'000u);
}

TEST_F(MethodTableWriterTest, TheFirstPassAndSweepsComeFromTheSource) {
  Open();
  source_.loaded = {Class("A", {M(1, 0x1000, "a")}), Class("B", {M(2, 0x2000, "b")})};
  source_.DescribeLoaded([this](const ClassMethods& c) { writer_.AddClass(0, c); });
  EXPECT_EQ(writer_.tracked(), 2u);
  EXPECT_FALSE(writer_.SweepDue(100 + MethodTableWriter::kSweepIntervalNs - 1));
  EXPECT_TRUE(writer_.SweepDue(100 + MethodTableWriter::kSweepIntervalNs));
  source_.slots = {{1, 0x1000}, {2, 0x5000}};  // b redefined, but the source cannot say how
  writer_.Sweep(100 + MethodTableWriter::kSweepIntervalNs, source_);
  EXPECT_EQ(source_.describe_class_calls, 1);
  EXPECT_EQ(stats_.method_table_methods_lost.Get(), 1u);
  EXPECT_EQ(writer_.tracked(), 1u) << "b is no longer followed";
  ASSERT_TRUE(writer_.Close(1).ok());
  EXPECT_EQ(Read().end_counts.methods_lost, 1u);
}

TEST_F(MethodTableWriterTest, SweepsThatFindNothingComeLessOften) {
  Open(0);
  writer_.AddClass(0, Class("A", {M(1, 0x1000, "a")}));
  source_.slots = {{1, 0x1000}};
  constexpr uint64_t kFirst = MethodTableWriter::kSweepIntervalNs;
  uint64_t now = kFirst;
  ASSERT_TRUE(writer_.SweepDue(now));
  for (uint64_t interval = 2 * kFirst; interval <= MethodTableWriter::kMaxSweepIntervalNs; interval *= 2) {
    writer_.Sweep(now, source_);
    EXPECT_FALSE(writer_.SweepDue(now + interval - 1)) << interval;
    EXPECT_TRUE(writer_.SweepDue(now + interval)) << interval;
    now += interval;
  }
  writer_.Sweep(now, source_);
  EXPECT_TRUE(writer_.SweepDue(now + MethodTableWriter::kMaxSweepIntervalNs)) << "no longer than the maximum";
  source_.slots[1] = 0;  // a change: back to the shortest interval
  writer_.Sweep(now + MethodTableWriter::kMaxSweepIntervalNs, source_);
  EXPECT_TRUE(writer_.SweepDue(now + MethodTableWriter::kMaxSweepIntervalNs + kFirst));
}

TEST_F(MethodTableWriterTest, UnreadableMethodsAreCountedAndAClosedTableTakesNothing) {
  Open();
  ClassMethods c = Class("A", {M(1, 0x1000, "a")});
  c.unreadable = 2;
  writer_.AddClass(0, c);
  ASSERT_TRUE(writer_.Close(5).ok());
  EXPECT_EQ(stats_.method_table_methods_lost.Get(), 2u);
  writer_.AddClass(0, Class("B", {M(2, 0x2000, "b")}));  // after the close: ignored
  writer_.Sweep(10, source_);
  EXPECT_TRUE(writer_.Flush().ok());
  const jitdump::MethodTable table = Read();
  EXPECT_EQ(table.methods.size(), 1u);
  EXPECT_EQ(table.end_counts.methods_lost, 2u);
}

TEST_F(MethodTableWriterTest, DiscardRemovesTheTable) {
  Open();
  writer_.Discard();
  EXPECT_FALSE(writer_.is_open());
  EXPECT_NE(::access((dir_ + "/jit-1.dump.methods").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace jitdump_agent
