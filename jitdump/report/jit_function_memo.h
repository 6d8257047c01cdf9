// The profile function of each JIT frame name the dumps spell, by where the dump holds the
// spelling: an inline record names each method once and every chain through it points at that
// name, so a JIT location's frames cost a probe each instead of formatting the Java name,
// copying it and hashing it into the profile's functions (a report makes ~56,000 such frames on
// 2,000 inline records). The names are views into the dumps' decoded records, which stay while
// the reader reads; the memo is emptied with them.
#pragma once

#include <cstdint>
#include <string_view>

#include "jitdump/report/flat_index.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

struct JitFunctionKey {
  std::string_view function;  // the dump's spelling
  std::string_view file;
  FrameKind kind = FrameKind::kUnknown;
  bool java_name = false;  // the function is JavaFrameName(function)
};

struct JitFunctionEntry {
  const char* function = nullptr;
  const char* file = nullptr;
  uint32_t function_size = 0;
  uint32_t file_size = 0;
  FrameKind kind = FrameKind::kUnknown;
  bool java_name = false;
  bool taken = false;
  uint32_t value = 0;  // the profile's function index

  bool used() const { return taken; }
  bool Is(const JitFunctionKey& key) const {
    return function == key.function.data() && function_size == key.function.size() && file == key.file.data() &&
           file_size == key.file.size() && kind == key.kind && java_name == key.java_name;
  }
  JitFunctionKey key() const {
    return {std::string_view(function, function_size), std::string_view(file, file_size), kind, java_name};
  }
  static JitFunctionEntry Of(const JitFunctionKey& key) {
    return JitFunctionEntry{key.function.data(), key.file.data(), static_cast<uint32_t>(key.function.size()),
                            static_cast<uint32_t>(key.file.size()), key.kind, key.java_name, true, 0};
  }
  static uint64_t Hash(const JitFunctionKey& key) {
    const uint64_t where = reinterpret_cast<uintptr_t>(key.function.data()) * 0x9E3779B97F4A7C15ull ^
                           reinterpret_cast<uintptr_t>(key.file.data());
    return MixBits(where ^ (uint64_t{key.function.size()} << 40 | uint64_t{key.file.size()} << 8 |
                            static_cast<uint64_t>(key.kind) << 1 | key.java_name));
  }
};

using JitFunctionMemo = FlatTable<JitFunctionEntry, JitFunctionKey, 1024>;

}  // namespace jitdump::report
