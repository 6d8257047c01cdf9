// The method cache over the JVMTI lookups, against a fake jvmtiEnv.
#include "agent/core/method_cache.h"

#include "agent/jvmti/jvmti_method_lookup.h"

#include <gtest/gtest.h>

#include <vector>

#include "fake_jvmti.h"

namespace jitdump_agent {
namespace {

using test_support::FakeClass;
using test_support::FakeJvmti;
using test_support::FakeMethod;

class MethodCacheTest : public ::testing::Test {
 protected:
  FakeJvmti fake_;
  Stats stats_;
  FakeClass map_class_{"Ljava/util/HashMap;", "HashMap.java"};
  FakeClass lambda_class_{"LWork$$Lambda.0x0000000800c01000;", ""};
  FakeMethod get_node_{&map_class_, "getNode", "(ILjava/lang/Object;)Ljava/util/HashMap$Node;",
                       {{10, 571}, {0, 569}, {20, 575}}};
  FakeMethod lambda_{&lambda_class_, "apply", "(Ljava/lang/Object;)Ljava/lang/Object;", {}};

  // One callback's round of `cache`: looks `methods` up, as a load naming them would.
  static void GetInOneCallback(MethodCache& cache, const std::vector<MethodId>& methods) {
    auto lock = cache.Lock();
    cache.BeginCallback();
    for (MethodId method : methods) cache.Get(method);
  }
};

TEST_F(MethodCacheTest, ResolvesNameFileAndSortedLines) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  const MethodInfo* info = cache.Get(get_node_.mid());
  EXPECT_EQ(info->name, "java.util.HashMap.getNode(int, java.lang.Object)");
  EXPECT_EQ(info->source.function, "java.util.HashMap.getNode");
  EXPECT_EQ(info->source.file, "java/util/HashMap.java");
  EXPECT_EQ(info->source.lines.LineAt(12), 571);
  EXPECT_EQ(info->source.lines.FirstLine(), 569);
}

TEST_F(MethodCacheTest, MissingLineInformationIsNotAnError) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  const MethodInfo* info = cache.Get(lambda_.mid());
  EXPECT_EQ(info->name, "Work$$Lambda/0x0000000800c01000.apply(java.lang.Object)");
  EXPECT_FALSE(info->source.has_lines());
  EXPECT_EQ(stats_.lookup_errors.Get(), 0u);
}

TEST_F(MethodCacheTest, EachMethodIsLookedUpOnceAndValidatedOncePerCallback) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  for (int i = 0; i < 50; ++i) {
    cache.Get(get_node_.mid());
    cache.Get(lambda_.mid());
  }
  EXPECT_EQ(FakeJvmti::calls().get_method_name, 2);
  EXPECT_EQ(FakeJvmti::calls().get_line_number_table, 1);  // the lambda has no SourceFile: not asked
  const int locations = FakeJvmti::calls().get_method_location;
  cache.BeginCallback();
  cache.Get(get_node_.mid());
  cache.Get(get_node_.mid());
  EXPECT_EQ(FakeJvmti::calls().get_method_location, locations + 1);
  EXPECT_EQ(FakeJvmti::calls().get_method_name, 2);
}

TEST_F(MethodCacheTest, RedefinitionThatChangesTheBytecodeIsNoticed) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  EXPECT_EQ(cache.Get(get_node_.mid())->source.lines.LineAt(25), 575);
  get_node_.lines = {{0, 700}};
  get_node_.end_location = 42;
  cache.BeginCallback();
  EXPECT_EQ(cache.Get(get_node_.mid())->source.lines.LineAt(25), 700);
}

TEST_F(MethodCacheTest, EvictedMethodsAreResolvedAgain) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  cache.Get(get_node_.mid());
  cache.Evict(get_node_.mid());
  cache.BeginCallback();
  cache.Get(get_node_.mid());
  EXPECT_EQ(FakeJvmti::calls().get_method_name, 2);
}

TEST_F(MethodCacheTest, UnloadedMethodGetsAPlaceholderAndIsCounted) {
  get_node_.valid = false;
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  const MethodInfo* info = cache.Get(get_node_.mid());
  EXPECT_FALSE(info->resolved);
  EXPECT_EQ(info->name, "[unknown Java method]");
  EXPECT_EQ(stats_.lookup_errors.Get(), 1u);
}

TEST_F(MethodCacheTest, SizeStaysWithinTheBound) {
  std::vector<FakeMethod> methods(100, get_node_);
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 8, stats_);
  auto lock = cache.Lock();
  for (FakeMethod& m : methods) {
    cache.BeginCallback();
    cache.Get(m.mid());
    EXPECT_LE(cache.size(), 8u);
  }
}

TEST_F(MethodCacheTest, CacheOffStillResolves) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJvm, false, stats_);
  MethodCache cache(lookup, 0, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  EXPECT_EQ(cache.Get(get_node_.mid())->name, "Ljava/util/HashMap;getNode(ILjava/lang/Object;)Ljava/util/HashMap$Node;");
  EXPECT_EQ(FakeJvmti::calls().get_line_number_table, 0);  // lines=off
}


TEST_F(MethodCacheTest, CacheOffKeepsTheMethodsOfOneCallbackApart) {
  // Frames of one load keep pointers to every method they name: with cache=0 those must still
  // be distinct entries for the whole callback, and nothing is kept for the next one.
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 0, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  const MethodInfo* node = cache.Get(get_node_.mid());
  const MethodInfo* lambda = cache.Get(lambda_.mid());
  EXPECT_NE(node, lambda);
  EXPECT_EQ(node->source.file, "java/util/HashMap.java");
  EXPECT_EQ(node->source.lines.LineAt(25), 575);
  EXPECT_EQ(cache.Get(get_node_.mid()), node);
  cache.BeginCallback();
  EXPECT_EQ(cache.size(), 0u);
  cache.Get(get_node_.mid());
  EXPECT_EQ(FakeJvmti::calls().get_method_name, 3);
}

TEST_F(MethodCacheTest, ManyDistinctMethodsInOneCallbackEachGetTheirOwnEntry) {
  // More distinct methods than the per-callback short list holds.
  std::vector<FakeMethod> methods;
  for (int i = 0; i < 40; ++i) {
    methods.push_back(get_node_);
    methods.back().lines = {{0, 1000 + i}};
  }
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 1024, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) EXPECT_EQ(cache.Get(methods[i].mid())->source.lines.LineAt(0), 1000 + i);
  }
  EXPECT_EQ(FakeJvmti::calls().get_method_name, 40);
  const int locations = FakeJvmti::calls().get_method_location;
  cache.BeginCallback();
  for (int i = 0; i < 40; ++i) cache.Get(methods[i].mid());
  EXPECT_EQ(FakeJvmti::calls().get_method_location, locations + 40);  // validated once each
}


TEST_F(MethodCacheTest, NearTheBoundEntriesAreShedGraduallyNotAllAtOnce) {
  std::vector<FakeMethod> methods(400, get_node_);
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 64, stats_);
  auto lock = cache.Lock();
  for (FakeMethod& m : methods) {  // one new method per callback, as most loads bring
    cache.BeginCallback();
    cache.Get(m.mid());
    EXPECT_LE(cache.size(), 64u);
  }
  EXPECT_EQ(stats_.method_cache_clears.Get(), 0u);
  EXPECT_GE(cache.size(), 64u - 64u / 8 - MethodCache::kTrimPerCallback);  // still warm
  EXPECT_LE(stats_.method_cache_high.Get(), 64u);
  // A callback bringing far more new methods than trimming sheds still cannot pass the bound
  // for long: the next callback empties the cache.
  cache.BeginCallback();
  std::vector<FakeMethod> burst(100, get_node_);
  for (FakeMethod& m : burst) cache.Get(m.mid());
  cache.BeginCallback();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(stats_.method_cache_clears.Get(), 1u);
}

TEST_F(MethodCacheTest, PastVmDeathACachedEntryStandsAndANewMethodIsUnnamed) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache cache(lookup, 16, stats_);
  auto lock = cache.Lock();
  cache.BeginCallback();
  cache.Get(get_node_.mid());
  FakeJvmti::dead() = true;  // every lookup now answers WRONG_PHASE, the validation too
  cache.BeginCallback();
  const MethodInfo* node = cache.Get(get_node_.mid());
  EXPECT_TRUE(node->resolved);
  EXPECT_EQ(node->name, "java.util.HashMap.getNode(int, java.lang.Object)");
  EXPECT_EQ(node->source.lines.LineAt(12), 571);
  EXPECT_EQ(stats_.method_hits_after_vm_death.Get(), 1u);
  const MethodInfo* lambda = cache.Get(lambda_.mid());
  EXPECT_FALSE(lambda->resolved);
  EXPECT_TRUE(lambda->refused_dying);
}

TEST_F(MethodCacheTest, TakenEntriesAnswerWithoutALookupAndLeaveTheOtherCache) {
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache writers(lookup, 16, stats_), callbacks(lookup, 16, stats_);
  GetInOneCallback(writers, {get_node_.mid(), lambda_.mid()});
  GetInOneCallback(callbacks, {lambda_.mid()});  // known to both: the callbacks' own entry stays
  EXPECT_TRUE(callbacks.TakeEntriesOf(writers));
  EXPECT_EQ(stats_.method_entries_handed_over.Get(), 1u);
  EXPECT_EQ(callbacks.size(), 2u);
  EXPECT_EQ(writers.size(), 1u);
  const int names = FakeJvmti::calls().get_method_name;
  FakeJvmti::dead() = true;
  auto lock = callbacks.Lock();
  callbacks.BeginCallback();
  EXPECT_EQ(callbacks.Get(get_node_.mid())->source.lines.LineAt(25), 575);
  EXPECT_EQ(FakeJvmti::calls().get_method_name, names);
}

TEST_F(MethodCacheTest, TakingEntriesGivesUpOnALockHeldTooLong) {
  // At VM death a lookup may be stuck inside the JVM with its cache locked: the hand-over is
  // skipped rather than waited for.
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache writers(lookup, 16, stats_), callbacks(lookup, 16, stats_);
  GetInOneCallback(writers, {get_node_.mid()});
  auto stuck = writers.Lock();
  EXPECT_FALSE(callbacks.TakeEntriesOf(writers));
  EXPECT_EQ(callbacks.size(), 0u);
  EXPECT_EQ(writers.size(), 1u);
  stuck.unlock();
  EXPECT_TRUE(callbacks.TakeEntriesOf(writers));
  EXPECT_EQ(callbacks.size(), 1u);
}

TEST_F(MethodCacheTest, TakingEntriesStopsBelowTheTrimThreshold) {
  std::vector<FakeMethod> methods(40, get_node_);
  std::vector<MethodId> ids;
  for (FakeMethod& m : methods) ids.push_back(m.mid());
  JvmtiMethodLookup lookup(fake_.env(), NameStyle::kJava, true, stats_);
  MethodCache writers(lookup, 64, stats_), callbacks(lookup, 16, stats_);
  GetInOneCallback(writers, ids);
  EXPECT_TRUE(callbacks.TakeEntriesOf(writers));
  EXPECT_EQ(callbacks.size(), 16u - 16u / 8);
  EXPECT_EQ(writers.size(), 40u - callbacks.size());
  auto lock = callbacks.Lock();
  callbacks.BeginCallback();  // nothing shed, nothing cleared
  EXPECT_EQ(callbacks.size(), 16u - 16u / 8);
  EXPECT_EQ(stats_.method_cache_clears.Get(), 0u);
}

}  // namespace
}  // namespace jitdump_agent
