// Whether the agent describes interpreted frames on a JVM (agent/core/interpreter_layout.h), from
// VMStructs tables laid out as HotSpot exports them (agent/core/vm_structs.h), built here: the known
// JVMs pass, and every way of being unknown (a version outside 17-25, no VMStructs, a field
// missing or of another type, the frame's constants moved) turns the feature off with a reason.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "agent/core/interpreter_layout.h"
#include "agent/core/vm_structs.h"

namespace jitdump_agent {
namespace {

// HotSpot's entry structs (vmStructs.hpp), as the exported offsets and strides describe them.
struct StructEntry {
  const char* type_name;
  const char* field_name;
  const char* type_string;
  int32_t is_static;
  uint64_t offset;
  void* address;
};
struct TypeEntry {
  const char* type_name;
  const char* superclass_name;
  int32_t is_oop_type;
  int32_t is_integer_type;
  int32_t is_unsigned;
  uint64_t size;
};
struct IntEntry {
  const char* name;
  int32_t value;
};

// A JVM's tables: JDK 17's values (checked on OpenJDK 17.0.21), editable per test.
struct FakeJvm {
  std::vector<StructEntry> structs{
      {"Method", "_constMethod", "ConstMethod*", 0, 8, nullptr},
      {"Method", "_method_data", "MethodData*", 0, 16, nullptr},
      {"ConstMethod", "_constants", "ConstantPool*", 0, 8, nullptr},
      {"ConstMethod", "_code_size", "u2", 0, 32, nullptr},
      {"CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, nullptr},
      {nullptr, nullptr, nullptr, 0, 0, nullptr}};
  std::vector<TypeEntry> types{{"Method", "Metadata", 0, 0, 0, 88},
                               {"ConstMethod", "MetaspaceObj", 0, 0, 0, 48},
                               {nullptr, nullptr, 0, 0, 0, 0}};
  std::vector<IntEntry> ints{{"frame::pc_return_offset", 0},
                             {"frame::interpreter_frame_sender_sp_offset", -1},
                             {"frame::interpreter_frame_last_sp_offset", -2},
                             {nullptr, 0}};

  VmStructsTables Tables() const {
    VmStructsTables t;
    t.structs = reinterpret_cast<const uint8_t*>(structs.data());
    t.struct_stride = sizeof(StructEntry);
    t.struct_type_name = offsetof(StructEntry, type_name);
    t.struct_field_name = offsetof(StructEntry, field_name);
    t.struct_type_string = offsetof(StructEntry, type_string);
    t.struct_is_static = offsetof(StructEntry, is_static);
    t.struct_offset = offsetof(StructEntry, offset);
    t.types = reinterpret_cast<const uint8_t*>(types.data());
    t.type_stride = sizeof(TypeEntry);
    t.type_type_name = offsetof(TypeEntry, type_name);
    t.type_size = offsetof(TypeEntry, size);
    t.int_constants = reinterpret_cast<const uint8_t*>(ints.data());
    t.int_stride = sizeof(IntEntry);
    t.int_name = offsetof(IntEntry, name);
    t.int_value = offsetof(IntEntry, value);
    return t;
  }
  LayoutDecision Decide(int feature = 17, bool x86_64 = true) const {
    const VmStructs vm(Tables());
    return DecideInterpreterLayout(&vm, JvmVersion{feature, 0, 21}, x86_64);
  }
};

TEST(VmStructs, FindsFieldsTypesAndConstants) {
  const FakeJvm jvm;
  const VmStructs vm(jvm.Tables());
  std::string type;
  EXPECT_EQ(vm.FieldOffset("Method", "_constMethod", &type), 8u);
  EXPECT_EQ(type, "ConstMethod*");
  EXPECT_EQ(vm.FieldOffset("ConstMethod", "_code_size"), 32u);
  EXPECT_FALSE(vm.FieldOffset("ConstMethod", "_nothing"));
  EXPECT_FALSE(vm.FieldOffset("CodeCache", "_heaps")) << "a static field has no offset";
  EXPECT_EQ(vm.TypeSize("ConstMethod"), 48u);
  EXPECT_FALSE(vm.TypeSize("Nothing"));
  EXPECT_EQ(vm.IntConstant("frame::interpreter_frame_last_sp_offset"), -2);
  EXPECT_FALSE(vm.IntConstant("frame::nothing"));
}

TEST(VmStructs, TheRealJvmsTablesAreAbsentFromATestProcess) {
  EXPECT_FALSE(FindVmStructs()) << "no libjvm here, nothing exports gHotSpotVMStructs";
}

TEST(InterpreterLayout, KnownJvmsHaveALayout) {
  FakeJvm jdk17;
  LayoutDecision d = jdk17.Decide(17);
  ASSERT_TRUE(d.layout) << d.why_not;
  EXPECT_EQ(d.layout->jvm_feature, 17u);
  EXPECT_EQ(d.layout->method_const_method, 8u);
  EXPECT_EQ(d.layout->const_method_size, 48u);
  EXPECT_EQ(d.layout->const_method_code_size, 32u);
  EXPECT_EQ(d.layout->method_slot, -3);
  EXPECT_EQ(d.layout->bcp_slot, -8);
  EXPECT_EQ(d.layout->complete_slot, -9);
  // Temurin 25.0.3's values.
  FakeJvm jdk25;
  jdk25.structs[3].offset = 34;
  jdk25.types[1].size = 56;
  d = jdk25.Decide(25);
  ASSERT_TRUE(d.layout) << d.why_not;
  EXPECT_EQ(d.layout->const_method_size, 56u);
  EXPECT_EQ(d.layout->const_method_code_size, 34u);
  EXPECT_TRUE(jdk25.Decide(21).layout);
}

TEST(InterpreterLayout, EveryUnknownIsOffWithItsReason) {
  const FakeJvm known;
  auto why = [](const LayoutDecision& d) {
    EXPECT_FALSE(d.layout);
    EXPECT_FALSE(d.why_not.empty());
    return d.why_not;
  };
  EXPECT_NE(why(known.Decide(26)).find("JDK 26"), std::string::npos);
  EXPECT_NE(why(known.Decide(11)).find("JDK 11"), std::string::npos);
  EXPECT_NE(why(known.Decide(17, /*x86_64=*/false)).find("x86-64"), std::string::npos);
  EXPECT_NE(why(DecideInterpreterLayout(nullptr, JvmVersion{17, 0, 21}, true)).find("VMStructs"),
            std::string::npos);
  const VmStructs vm(known.Tables());
  EXPECT_NE(why(DecideInterpreterLayout(&vm, std::nullopt, true)).find("version"), std::string::npos);

  FakeJvm no_field = known;
  no_field.structs[0].field_name = "_constMethodRenamed";
  EXPECT_NE(why(no_field.Decide()).find("_constMethod"), std::string::npos);
  FakeJvm other_type = known;
  other_type.structs[3].type_string = "u4";
  EXPECT_NE(why(other_type.Decide()).find("_code_size"), std::string::npos);
  FakeJvm no_size = known;
  no_size.types[1].type_name = "ConstMethodX";
  EXPECT_NE(why(no_size.Decide()).find("size of ConstMethod"), std::string::npos);
  FakeJvm moved = known;
  moved.ints[1].value = -2;
  EXPECT_NE(why(moved.Decide()).find("frame"), std::string::npos);
  FakeJvm unexported = known;
  unexported.ints.erase(unexported.ints.begin() + 2);
  EXPECT_NE(why(unexported.Decide()).find("frame"), std::string::npos);
}

}  // namespace
}  // namespace jitdump_agent
