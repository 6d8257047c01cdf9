// HotSpot's VMStructs: the tables libjvm exports (gHotSpotVMStructs, gHotSpotVMTypes,
// gHotSpotVMIntConstants and the offsets and strides that describe their entries) so that
// tools outside the JVM can find fields of its types: the serviceability agent, async-profiler
// and the OpenTelemetry eBPF profiler read them. The agent reads three things there (where a
// method's bytecodes lie) and checks two constants of the interpreter's frame.
//
// Plain C++ (dlsym only). The tables are static data of libjvm, alive as long as the process;
// every string in them is a C string of libjvm's. A walk stops at the table's terminating entry
// (a null type name) or after kMaxEntries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jitdump_agent {

// Where the three tables are and how their entries are laid out, as libjvm exports it.
struct VmStructsTables {
  const uint8_t* structs = nullptr;  // VMStructEntry[]
  uint64_t struct_stride = 0;
  uint64_t struct_type_name = 0;     // offsets of the fields inside an entry
  uint64_t struct_field_name = 0;
  uint64_t struct_type_string = 0;
  uint64_t struct_is_static = 0;
  uint64_t struct_offset = 0;
  const uint8_t* types = nullptr;    // VMTypeEntry[]
  uint64_t type_stride = 0;
  uint64_t type_type_name = 0;
  uint64_t type_size = 0;
  const uint8_t* int_constants = nullptr;  // VMIntConstantEntry[]
  uint64_t int_stride = 0;
  uint64_t int_name = 0;
  uint64_t int_value = 0;
};

// The tables of the libjvm in this process; nullopt when it exports none (not HotSpot, or a
// build without them).
std::optional<VmStructsTables> FindVmStructs();

class VmStructs {
 public:
  static constexpr size_t kMaxEntries = 1 << 16;

  explicit VmStructs(const VmStructsTables& tables) : t_(tables) {}

  // A non-static field's offset in its type, and the C++ type it is declared with ("u2",
  // "ConstMethod*").
  std::optional<uint64_t> FieldOffset(std::string_view type, std::string_view field,
                                      std::string* type_string = nullptr) const;
  // sizeof(type).
  std::optional<uint64_t> TypeSize(std::string_view type) const;
  std::optional<int32_t> IntConstant(std::string_view name) const;

 private:
  VmStructsTables t_;
};

}  // namespace jitdump_agent
