// Symbol names spelled the way perf 6.1 prints them. Debian's perf demangles ELF symbols with
// libiberty's cplus_demangle and no options (perf passes DMGL_PARAMS | DMGL_ANSI only with -v):
// "_ZN10JavaThread3runEv" is "JavaThread::run", without the argument list; Rust's legacy
// mangling loses its hash. The same library (Debian's libiberty-dev) spells them here.
#pragma once

#include <string>
#include <string_view>

namespace jitdump::symbols {

// `name` demangled as perf 6.1 prints it, or `name` itself when it is no mangled C++ or Rust
// name ("memcpy", "__libc_start_main").
std::string DemangleLikePerf(std::string_view name);

}  // namespace jitdump::symbols
