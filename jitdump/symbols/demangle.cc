#include "jitdump/symbols/demangle.h"

#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>

namespace jitdump::symbols {
namespace {

// Whether libiberty's Rust demangler may take the name. cplus_demangle's automatic style tries
// it first on every name, and it answers only for "_R..." (Rust's v0 mangling) and for legacy
// "_ZN..." names that end in a "17h" hash segment (rust-demangle.c checks for "17h" 19
// characters from the end before anything else); it scans each name to say no, which was a
// third of the demangling of a report's ELF symbols.
bool MayBeRust(std::string_view name) {
  return name.starts_with("_R") || (name.starts_with("_ZN") && name.find("17h") != std::string_view::npos);
}

}  // namespace

std::string DemangleLikePerf(std::string_view name) {
  // Every name goes through the demangler, as in perf: its automatic style decides what is
  // mangled (C++, Rust), and says no to plain C names. Its styles all start with '_' (Rust
  // "_R"/"_ZN", the C++ ABI "_Z" and "_GLOBAL_"; D and Ada are not in the automatic style), so a
  // name that does not is returned as it is without asking; a "_Z" name that cannot be Rust
  // goes to the C++ demangler the automatic style would end up in.
  if (name.empty() || name[0] != '_') return std::string(name);
  const std::string copy(name);  // NUL-terminated for the C interface
  char* demangled = name.starts_with("_Z") && !MayBeRust(name) ? cplus_demangle_v3(copy.c_str(), DMGL_NO_OPTS)
                                                                : cplus_demangle(copy.c_str(), DMGL_NO_OPTS);
  std::unique_ptr<char, decltype(&std::free)> owned(demangled, &std::free);
  if (owned == nullptr) return copy;
  return std::string(owned.get());
}

}  // namespace jitdump::symbols
