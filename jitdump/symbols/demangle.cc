#include "jitdump/symbols/demangle.h"

#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>

namespace jitdump::symbols {

std::string DemangleLikePerf(std::string_view name) {
  // Every name goes through the demangler, as in perf: its automatic style decides what is
  // mangled (C++, Rust), and says no to plain C names.
  if (name.empty()) return std::string();
  const std::string copy(name);  // NUL-terminated for the C interface
  std::unique_ptr<char, decltype(&std::free)> demangled(cplus_demangle(copy.c_str(), DMGL_NO_OPTS), &std::free);
  if (demangled == nullptr) return copy;
  return std::string(demangled.get());
}

}  // namespace jitdump::symbols
