// The JVM's side of the method table (agent/jvmti/jvm_method_source.h) over a fake jvmtiEnv and fake
// HotSpot metadata: Method and ConstMethod blocks laid out as the layout says (the Method*'s
// ConstMethod pointer at method_const_method, the bytecode count at const_method_code_size, the
// bytecodes after const_method_size bytes). What JVMTI says (names, files, sorted lines, native)
// and what the metadata says (Method*, bytecode range) come together; a method whose metadata
// cannot be read (an unmapped page) or disagrees with JVMTI is left out and counted, never a
// crash; enough disagreement refutes the layout.
#include "agent/jvmti/jvm_method_source.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "agent/jvmti/jvm_ids.h"
#include "fake_jvmti.h"

namespace jitdump_agent {
namespace {

using test_support::FakeClass;
using test_support::FakeJvm;
using test_support::FakeJvmti;
using test_support::FakeMethod;

constexpr uint64_t kConstMethodOffset = 8;  // Method::_constMethod
constexpr uint64_t kConstMethodSize = 48;   // sizeof(ConstMethod) (JDK 17)
constexpr uint64_t kCodeSizeOffset = 32;    // ConstMethod::_code_size

// The fake JVM's metadata, and the jmethodID -> Method* slots.
std::map<MethodId, uint64_t> g_slots;
uint64_t ReadFakeSlot(MethodId id) { return g_slots.count(id) ? g_slots[id] : 0; }

struct Metadata {
  uint8_t method[88] = {};
  uint8_t const_method[kConstMethodSize + 64] = {};
};

class JvmMethodSourceTest : public ::testing::Test {
 protected:
  JvmMethodSourceTest() {
    layout_.jvm_feature = 17;
    layout_.method_const_method = kConstMethodOffset;
    layout_.const_method_size = kConstMethodSize;
    layout_.const_method_code_size = kCodeSizeOffset;
    FakeJvm::ActAsJvmThread();
    g_slots.clear();
    FakeJvmti::loaded_classes().clear();
  }
  ~JvmMethodSourceTest() override { FakeJvmti::loaded_classes().clear(); }

  // Gives `m` HotSpot metadata with `code_size` bytes of bytecode.
  Metadata& Place(FakeMethod& m, uint16_t code_size) {
    blocks_.push_back(std::make_unique<Metadata>());
    Metadata& meta = *blocks_.back();
    const uint64_t cm = reinterpret_cast<uintptr_t>(meta.const_method);
    std::memcpy(meta.method + kConstMethodOffset, &cm, sizeof cm);
    std::memcpy(meta.const_method + kCodeSizeOffset, &code_size, sizeof code_size);
    g_slots[m.mid()] = reinterpret_cast<uintptr_t>(meta.method);
    m.end_location = code_size - 1;
    return meta;
  }
  JvmMethodSource Source() { return JvmMethodSource(jvm_.vm(), fake_.env(), layout_, stats_, ReadFakeSlot); }

  FakeJvmti fake_;
  FakeJvm jvm_;
  Stats stats_;
  InterpreterLayout layout_;
  std::vector<std::unique_ptr<Metadata>> blocks_;
  FakeClass klass_{"Lp/Chain;", "Chain.java"};
  FakeMethod inner_{&klass_, "inner", "(I)V", {{38, 31}, {0, 31}, {7, 32}, {19, 33}}};
  FakeMethod nano_{&klass_, "nanoTime", "()J", {}};
};

TEST_F(JvmMethodSourceTest, ClassesAreDescribedFromJvmtiAndTheMetadata) {
  nano_.native = true;
  klass_.methods = {&inner_, &nano_};
  Metadata& inner = Place(inner_, 45);
  Place(nano_, 0);
  FakeJvmti::loaded_classes() = {&klass_};
  JvmMethodSource source = Source();
  std::vector<ClassMethods> seen;
  source.DescribeLoaded([&](const ClassMethods& c) { seen.push_back(c); });
  ASSERT_EQ(seen.size(), 1u);
  const ClassMethods& c = seen[0];
  EXPECT_EQ(c.name, "p.Chain");
  EXPECT_EQ(c.file, "p/Chain.java");
  EXPECT_EQ(c.unreadable, 0u);
  ASSERT_EQ(c.methods.size(), 2u);
  const ClassMethods::Method& m = c.methods[0];
  EXPECT_EQ(m.id, inner_.mid());
  EXPECT_EQ(m.name, "inner");
  EXPECT_EQ(m.descriptor, "(I)V");
  EXPECT_EQ(m.method, reinterpret_cast<uintptr_t>(inner.method));
  EXPECT_EQ(m.code_base, reinterpret_cast<uintptr_t>(inner.const_method) + kConstMethodSize);
  EXPECT_EQ(m.code_size, 45u);
  EXPECT_FALSE(m.native);
  ASSERT_EQ(m.lines.size(), 4u);
  EXPECT_EQ(m.lines[0].bci, 0u) << "sorted by bci: JVMTI gives class-file order";
  EXPECT_EQ(m.lines[3].bci, 38u);
  EXPECT_TRUE(c.methods[1].native);
  EXPECT_TRUE(c.methods[1].lines.empty());
  EXPECT_FALSE(source.refuted());
}

TEST_F(JvmMethodSourceTest, OnlyPreparedClassesWithMethodsAreListed) {
  FakeClass array{"[I", ""};
  array.status = JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PREPARED;
  FakeClass loading{"Lp/Loading;", "Loading.java"};
  loading.status = JVMTI_CLASS_STATUS_VERIFIED;
  klass_.methods = {&inner_};
  Place(inner_, 45);
  FakeJvmti::loaded_classes() = {&array, &loading, &klass_};
  JvmMethodSource source = Source();
  std::vector<std::string> names;
  source.DescribeLoaded([&](const ClassMethods& c) { names.push_back(c.name); });
  EXPECT_EQ(names, std::vector<std::string>{"p.Chain"});
}

TEST_F(JvmMethodSourceTest, UnreadableOrDisagreeingMetadataIsLeftOut) {
  FakeMethod gone{&klass_, "gone", "()V", {{0, 1}}};
  FakeMethod wrong{&klass_, "wrong", "()V", {{0, 1}}};
  klass_.methods = {&inner_, &gone, &wrong};
  Place(inner_, 45);
  // A Method* on a page that cannot be read: the read fails, nothing faults.
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  g_slots[gone.mid()] = reinterpret_cast<uintptr_t>(page);
  // A bytecode count JVMTI disagrees with.
  Place(wrong, 20);
  wrong.end_location = 30;
  JNIEnv* env = nullptr;
  ASSERT_EQ(jvm_.vm()->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6), JNI_OK);
  const ClassPin pin = PinOf(env->NewGlobalRef(reinterpret_cast<jobject>(&klass_)));  // what ClassPrepare takes
  const int refs = FakeJvm::live_global_refs();
  JvmMethodSource source = Source();
  ClassMethods c;
  ASSERT_TRUE(source.DescribePinned(pin, &c));
  EXPECT_EQ(FakeJvm::live_global_refs(), refs - 1) << "the pin is released";
  ASSERT_EQ(c.methods.size(), 1u);
  EXPECT_EQ(c.methods[0].name, "inner");
  EXPECT_EQ(c.unreadable, 2u);
  ::munmap(page, 4096);
}

TEST_F(JvmMethodSourceTest, ALayoutMostMethodsDisagreeWithIsRefuted) {
  std::vector<std::unique_ptr<FakeMethod>> methods;
  for (int i = 0; i < 300; ++i) {
    methods.push_back(std::make_unique<FakeMethod>(FakeMethod{&klass_, "m" + std::to_string(i), "()V", {{0, 1}}}));
    Place(*methods.back(), 10);
    if (i % 10 == 0) methods.back()->end_location = 50;  // one in ten disagrees
    klass_.methods.push_back(methods.back().get());
  }
  FakeJvmti::loaded_classes() = {&klass_};
  JvmMethodSource source = Source();
  size_t kept = 0;
  source.DescribeLoaded([&](const ClassMethods& c) { kept = c.methods.size(); });
  EXPECT_EQ(kept, 270u);
  EXPECT_TRUE(source.refuted()) << "10% disagree: the offsets are not this JVM's";
}

TEST_F(JvmMethodSourceTest, ARedefinedClassIsDescribedThroughAnIdOfIt) {
  klass_.methods = {&inner_, &nano_};
  nano_.native = true;
  Place(inner_, 45);
  Place(nano_, 0);
  JvmMethodSource source = Source();
  Metadata& v2 = Place(inner_, 52);  // redefined: the id's slot points at a new Method
  inner_.lines = {{0, 40}, {9, 41}};
  EXPECT_EQ(source.CurrentMethod(inner_.mid()), reinterpret_cast<uintptr_t>(v2.method));
  ClassMethods c;
  ASSERT_TRUE(source.DescribeClassOf(inner_.mid(), &c));
  EXPECT_EQ(c.name, "p.Chain");
  ASSERT_EQ(c.methods.size(), 2u);
  EXPECT_EQ(c.methods[0].method, reinterpret_cast<uintptr_t>(v2.method));
  EXPECT_EQ(c.methods[0].code_size, 52u);
  EXPECT_EQ(c.methods[0].lines[1].line, 41u);
  EXPECT_TRUE(c.methods[1].native);
  inner_.valid = false;  // its class unloaded
  EXPECT_FALSE(source.DescribeClassOf(inner_.mid(), &c));
}

}  // namespace
}  // namespace jitdump_agent
