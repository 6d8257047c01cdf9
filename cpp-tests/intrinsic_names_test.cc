// Method-handle intrinsics named from the JVM's code list (agent/core/intrinsic_names.h): parsing
// Compiler.codelist as HotSpot 17 and 25 print it, one read serving every load posted before
// it, the time budget, and the name that says what is unknown.
#include "agent/core/intrinsic_names.h"

#include <gtest/gtest.h>

#include <string>

namespace jitdump_agent {
namespace {

// Lines as `jcmd <pid> Compiler.codelist` printed them for MhIntrinsics on JDK 17.0.21.
constexpr const char* kCodeList =
    "10 0 0 java.lang.invoke.MethodHandle.linkToStatic(IILjava/lang/invoke/MemberName;)I "
    "[0x00007fadf0ec7890, 0x00007fadf0ec7a00 - 0x00007fadf0ec7a20]\n"
    "16 0 0 java.lang.invoke.MethodHandle.linkToInterface(Ljava/lang/Object;DLjava/lang/invoke/MemberName;)D "
    "[0x00007fadf0ec8c10, 0x00007fadf0ec8d80 - 0x00007fadf0ec8df0]\n"
    "21 0 0 java.lang.invoke.MethodHandle.invokeBasic(Ljava/lang/Object;I)I "
    "[0x00007fadf0ec9010, 0x00007fadf0ec9180 - 0x00007fadf0ec91c0]\n"
    // A compiled Java method of the same class (level 3), and a hidden class: never intrinsics.
    "200 3 0 java.lang.invoke.MethodHandle.asType(Ljava/lang/invoke/MethodType;)Ljava/lang/invoke/MethodHandle; "
    "[0x00007fadf0ed0010, 0x00007fadf0ed0180 - 0x00007fadf0ed0400]\n"
    "179 4 0 java.lang.invoke.LambdaForm$DMH/0x00007fad80007c00.invokeStatic(Ljava/lang/Object;II)I "
    "[0x00007fadf0ed8390, 0x00007fadf0ed8500 - 0x00007fadf0ed8558]\n";

TEST(IntrinsicNamesTest, ParsesTheIntrinsicsOfACodeList) {
  const auto table = ParseIntrinsics(kCodeList, NameStyle::kJava);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table.at(0x00007fadf0ec7a00).name,
            "java.lang.invoke.MethodHandle.linkToStatic(int, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(table.at(0x00007fadf0ec8d80).name,
            "java.lang.invoke.MethodHandle.linkToInterface(java.lang.Object, double, java.lang.invoke.MemberName)");
  EXPECT_EQ(table.at(0x00007fadf0ec9180).name, "java.lang.invoke.MethodHandle.invokeBasic(java.lang.Object, int)");
  EXPECT_EQ(table.count(0x00007fadf0ed0180), 0u);  // asType: compiled Java, level 3
}

TEST(IntrinsicNamesTest, EveryStyleAndItsPerfMapSpelling) {
  const auto jvm = ParseIntrinsics(kCodeList, NameStyle::kJvm);
  EXPECT_EQ(jvm.at(0x00007fadf0ec7a00).name,
            "Ljava/lang/invoke/MethodHandle;linkToStatic(IILjava/lang/invoke/MemberName;)I");
  EXPECT_EQ(jvm.at(0x00007fadf0ec7a00).perf_map_name(),
            "java.lang.invoke.MethodHandle.linkToStatic(int, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(ParseIntrinsics(kCodeList, NameStyle::kSimple).at(0x00007fadf0ec9180).name,
            "java.lang.invoke.MethodHandle.invokeBasic");
  EXPECT_EQ(UnknownIntrinsicName(NameStyle::kJava).name,
            "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
  EXPECT_EQ(UnknownIntrinsicName(NameStyle::kJvm).perf_map_name(),
            "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
}

TEST(IntrinsicNamesTest, MalformedLinesAreSkipped) {
  EXPECT_TRUE(ParseIntrinsics("", NameStyle::kJava).empty());
  EXPECT_TRUE(ParseIntrinsics("10 0 0 java.lang.invoke.MethodHandle.linkToStatic(I)I [0x1, zz - 0x2]\n"
                              "10 0 0 java.lang.invoke.MethodHandle.linkToStatic\n"
                              "garbage\n\n",
                              NameStyle::kJava)
                  .empty());
}

// A code list that answers from a string, counting reads; time is the test's.
uint64_t g_now = 0;
uint64_t g_cpu = 0;
uint64_t Now() { return g_now; }
uint64_t Cpu() { return g_cpu; }

class FakeCodeList : public CodeListSource {
 public:
  bool Read(std::string* text) override {
    ++reads;
    g_now += 3 * read_cost;  // preempted for twice as long: only the CPU time counts
    g_cpu += read_cost;
    if (!available) return false;
    *text = list;
    return true;
  }
  std::string list = kCodeList;
  bool available = true;
  int reads = 0;
  uint64_t read_cost = 1'000'000;  // 1 ms
};

class IntrinsicNamerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_now = 1'000'000'000;
    g_cpu = 5'000'000;
  }
  // The name the namer gives, or "(later)" when it asks to be asked again.
  std::string NameOf(uint64_t code_addr, uint64_t posted, bool force = false) {
    const IntrinsicName* name = namer_.Name(code_addr, posted, force);
    return name != nullptr ? name->name : "(later)";
  }
  FakeCodeList list_;
  Stats stats_;
  IntrinsicNamer namer_{list_, NameStyle::kJava, stats_, Now, Cpu};
};

TEST_F(IntrinsicNamerTest, OneReadNamesEveryLoadPostedBeforeIt) {
  const uint64_t posted = g_now - 5'000'000;
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, posted),
            "java.lang.invoke.MethodHandle.linkToStatic(int, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(NameOf(0x00007fadf0ec9180, posted + 1),
            "java.lang.invoke.MethodHandle.invokeBasic(java.lang.Object, int)");
  EXPECT_EQ(list_.reads, 1);
  EXPECT_EQ(stats_.intrinsics_named.Get(), 2u);
  EXPECT_EQ(stats_.intrinsic_lists_read.Get(), 1u);
  EXPECT_EQ(stats_.intrinsic_list_ns.Get(), 1'000'000u);
}

TEST_F(IntrinsicNamerTest, ALoadPostedAfterTheReadIsReadAgain) {
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);
  g_now += 50'000'000;
  // Another intrinsic now lives at an address the old list named: the old list must not name it.
  list_.list = "30 0 0 java.lang.invoke.MethodHandle.linkToSpecial(Ljava/lang/Object;JILjava/lang/invoke/MemberName;)J "
               "[0x00007fadf0ec7890, 0x00007fadf0ec7a00 - 0x00007fadf0ec7a20]\n";
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, g_now - 1),
            "java.lang.invoke.MethodHandle.linkToSpecial(java.lang.Object, long, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(list_.reads, 2);
}

TEST_F(IntrinsicNamerTest, GoneFromTheCodeCacheIsUnknownNotAnotherName) {
  EXPECT_EQ(NameOf(0x1234, g_now - 1), "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
  EXPECT_EQ(stats_.intrinsics_unnamed.Get(), 1u);
}

TEST_F(IntrinsicNamerTest, WithoutACodeListEveryIntrinsicIsUnknownAndItIsAskedOnce) {
  list_.available = false;
  for (int i = 0; i < 3; ++i) {
    g_now += 10'000'000;
    EXPECT_EQ(NameOf(0x00007fadf0ec7a00, g_now - 1),
              "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
  }
  EXPECT_EQ(list_.reads, 1);
  EXPECT_EQ(stats_.intrinsics_unnamed.Get(), 3u);
}

TEST_F(IntrinsicNamerTest, ReadsStayWithinTheBudget) {
  // Each read costs 4 ms, and with the code cache as it was the next is expected to cost what
  // the last did: reads are allowed
  // while spent + 4 ms <= 10 ms + 0.1% of the time since the first read.
  list_.read_cost = 4'000'000;
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);  // the first read: always
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);  // 4 + 4 <= 10.012: allowed
  EXPECT_EQ(list_.reads, 2);
  g_now += 1'000'000'000;  // 8 + 4 > 10 + 1.024 ms: put off, the load waits
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, g_now - 1), "(later)");
  EXPECT_EQ(list_.reads, 2);
  EXPECT_EQ(stats_.intrinsic_lists_skipped.Get(), 0u) << "put off, not skipped";
  EXPECT_EQ(stats_.intrinsics_named.Get() + stats_.intrinsics_unnamed.Get(), 2u) << "a wait is not counted";
  g_now += 1'500'000'000;  // 8 + 4 <= 10 + 2.524: allowed again
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, g_now - 1),
            "java.lang.invoke.MethodHandle.linkToStatic(int, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(list_.reads, 3);
}

TEST_F(IntrinsicNamerTest, TheExpectedCostGrowsWithTheCodeCache) {
  stats_.compiled_method_load.Add(300);
  list_.read_cost = 1'000'000;  // 1 ms with 300 nmethods
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);
  stats_.compiled_method_load.Add(6000);  // 6,300 nmethods: about 21 ms, over 10 + 0.1 ms
  g_now += 100'000'000;
  (void)NameOf(0x00007fadf0ec9180, g_now - 1);
  EXPECT_EQ(list_.reads, 1);
  stats_.compiled_method_unload.Add(6000);  // back to 300: 1 ms expected, fits again
  (void)NameOf(0x00007fadf0ec9180, g_now - 1);
  EXPECT_EQ(list_.reads, 2);
}

TEST_F(IntrinsicNamerTest, AnExpensiveReadIsNotRepeated) {
  list_.read_cost = 30'000'000;  // a code cache grown large: over the budget by itself
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);
  g_now += 10'000'000'000;  // 30 + 30 > 10 + 10.03 ms
  EXPECT_EQ(NameOf(0x00007fadf0ec9180, g_now - 1), "(later)");
  EXPECT_EQ(list_.reads, 1);
  EXPECT_EQ(stats_.intrinsics_unnamed.Get(), 0u);
}

// Before the writer detaches it forces a read: one read, past the budget, names every load
// posted before it.
TEST_F(IntrinsicNamerTest, AForcedReadIgnoresTheBudgetAndServesEveryWaitingLoad) {
  list_.read_cost = 30'000'000;
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);
  g_now += 1'000'000'000;
  const uint64_t first = g_now - 2, second = g_now - 1;
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, first), "(later)");
  EXPECT_EQ(NameOf(0x00007fadf0ec7a00, first, /*force=*/true),
            "java.lang.invoke.MethodHandle.linkToStatic(int, int, java.lang.invoke.MemberName)");
  EXPECT_EQ(NameOf(0x00007fadf0ec9180, second), "java.lang.invoke.MethodHandle.invokeBasic(java.lang.Object, int)")
      << "the forced read serves a load posted before it without another";
  EXPECT_EQ(list_.reads, 2);
  EXPECT_EQ(stats_.intrinsic_list_ns.Get(), 60'000'000u) << "a forced read is spent from the budget too";
}

// A forced read runs while the JVM waits in VMDeath: not when it is expected to cost more than
// kForcedReadMaxNs. The loads are then unnamed, not left waiting.
TEST_F(IntrinsicNamerTest, AForcedReadExpectedToCostTooMuchIsNotMade) {
  list_.read_cost = IntrinsicNamer::kForcedReadMaxNs + 1;
  (void)NameOf(0x00007fadf0ec7a00, g_now - 1);
  g_now += 1'000'000'000;
  EXPECT_EQ(NameOf(0x00007fadf0ec9180, g_now - 1, /*force=*/true),
            "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)");
  EXPECT_EQ(list_.reads, 1);
  EXPECT_EQ(stats_.intrinsics_unnamed.Get(), 1u);
  EXPECT_EQ(stats_.intrinsic_lists_skipped.Get(), 1u);
}

}  // namespace
}  // namespace jitdump_agent
