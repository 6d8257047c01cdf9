// Reading HotSpot's VMStructs tables (vm_structs.h).
#include "agent/core/vm_structs.h"

#include <dlfcn.h>

#include <cstring>

namespace jitdump_agent {
namespace {

template <typename T>
T At(const uint8_t* entry, uint64_t offset) {
  T value;
  std::memcpy(&value, entry + offset, sizeof value);
  return value;
}

std::string_view Text(const char* text) { return text != nullptr ? std::string_view(text) : std::string_view(); }

// The value of an exported uint64_t symbol of libjvm, or nullopt.
std::optional<uint64_t> Exported(void* jvm, const char* name) {
  const void* symbol = ::dlsym(jvm, name);
  if (symbol == nullptr) return std::nullopt;
  uint64_t value;
  std::memcpy(&value, symbol, sizeof value);
  return value;
}

// An exported pointer to a table.
const uint8_t* ExportedTable(void* jvm, const char* name) {
  const void* symbol = ::dlsym(jvm, name);
  if (symbol == nullptr) return nullptr;
  const uint8_t* table;
  std::memcpy(&table, symbol, sizeof table);
  return table;
}

}  // namespace

std::optional<VmStructsTables> FindVmStructs() {
  // libjvm is already loaded (it loaded us); RTLD_NOLOAD never loads another copy.
  void* jvm = ::dlopen("libjvm.so", RTLD_NOLOAD | RTLD_LAZY);
  if (jvm == nullptr) jvm = RTLD_DEFAULT;
  VmStructsTables t;
  t.structs = ExportedTable(jvm, "gHotSpotVMStructs");
  t.types = ExportedTable(jvm, "gHotSpotVMTypes");
  t.int_constants = ExportedTable(jvm, "gHotSpotVMIntConstants");
  const char* const names[] = {
      "gHotSpotVMStructEntryArrayStride",   "gHotSpotVMStructEntryTypeNameOffset",
      "gHotSpotVMStructEntryFieldNameOffset", "gHotSpotVMStructEntryTypeStringOffset",
      "gHotSpotVMStructEntryIsStaticOffset", "gHotSpotVMStructEntryOffsetOffset",
      "gHotSpotVMTypeEntryArrayStride",     "gHotSpotVMTypeEntryTypeNameOffset",
      "gHotSpotVMTypeEntrySizeOffset",      "gHotSpotVMIntConstantEntryArrayStride",
      "gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset"};
  uint64_t* const fields[] = {&t.struct_stride, &t.struct_type_name, &t.struct_field_name, &t.struct_type_string,
                              &t.struct_is_static, &t.struct_offset, &t.type_stride, &t.type_type_name,
                              &t.type_size, &t.int_stride, &t.int_name, &t.int_value};
  for (size_t i = 0; i < std::size(names); ++i) {
    const std::optional<uint64_t> value = Exported(jvm, names[i]);
    if (!value) return std::nullopt;
    *fields[i] = *value;
  }
  if (jvm != RTLD_DEFAULT) ::dlclose(jvm);  // the reference RTLD_NOLOAD took; libjvm stays
  if (t.structs == nullptr || t.types == nullptr || t.int_constants == nullptr) return std::nullopt;
  // An entry must hold every field it is said to hold (a stride too small is no table we know).
  if (t.struct_stride < 8 || t.type_stride < 8 || t.int_stride < 8 || t.struct_type_name + 8 > t.struct_stride ||
      t.struct_field_name + 8 > t.struct_stride || t.struct_type_string + 8 > t.struct_stride ||
      t.struct_is_static + 4 > t.struct_stride || t.struct_offset + 8 > t.struct_stride ||
      t.type_type_name + 8 > t.type_stride || t.type_size + 8 > t.type_stride || t.int_name + 8 > t.int_stride ||
      t.int_value + 4 > t.int_stride) {
    return std::nullopt;
  }
  return t;
}

std::optional<uint64_t> VmStructs::FieldOffset(std::string_view type, std::string_view field,
                                               std::string* type_string) const {
  if (t_.structs == nullptr) return std::nullopt;
  const uint8_t* entry = t_.structs;
  for (size_t i = 0; i < kMaxEntries; ++i, entry += t_.struct_stride) {
    const char* entry_type = At<const char*>(entry, t_.struct_type_name);
    if (entry_type == nullptr) break;
    if (Text(entry_type) != type || Text(At<const char*>(entry, t_.struct_field_name)) != field) continue;
    if (At<int32_t>(entry, t_.struct_is_static) != 0) return std::nullopt;
    if (type_string != nullptr) *type_string = std::string(Text(At<const char*>(entry, t_.struct_type_string)));
    return At<uint64_t>(entry, t_.struct_offset);
  }
  return std::nullopt;
}

std::optional<uint64_t> VmStructs::TypeSize(std::string_view type) const {
  if (t_.types == nullptr) return std::nullopt;
  const uint8_t* entry = t_.types;
  for (size_t i = 0; i < kMaxEntries; ++i, entry += t_.type_stride) {
    const char* name = At<const char*>(entry, t_.type_type_name);
    if (name == nullptr) break;
    if (Text(name) == type) return At<uint64_t>(entry, t_.type_size);
  }
  return std::nullopt;
}

std::optional<int32_t> VmStructs::IntConstant(std::string_view name) const {
  if (t_.int_constants == nullptr) return std::nullopt;
  const uint8_t* entry = t_.int_constants;
  for (size_t i = 0; i < kMaxEntries; ++i, entry += t_.int_stride) {
    const char* entry_name = At<const char*>(entry, t_.int_name);
    if (entry_name == nullptr) break;
    if (Text(entry_name) == name) return At<int32_t>(entry, t_.int_value);
  }
  return std::nullopt;
}

}  // namespace jitdump_agent
