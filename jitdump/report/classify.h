// What kind of code a frame is (profile.h's FrameKind), decided from what the dump and perf
// say about it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "jitdump/read/dump.h"
#include "jitdump/read/queries.h"
#include "jitdump/report/profile.h"

namespace jitdump::report {

// A Java method name in one of the agent's spellings: names=java "pkg.Cls.m(int, T[])",
// names=jvm "Lpkg/Cls;m(I[LT;)V", or names=simple "pkg.Cls.m" (also what perf maps of other
// JVM agents hold). HotSpot's stubs and adapters have names like "Interpreter",
// "I2C/C2I adapters(0xb)", "vtable stub", "StubRoutines (1)" or "jlong_disjoint_arraycopy":
// none of them is a dotted identifier path followed by an argument list, which is what a
// "(" alone would not tell apart (the adapters' name has one).
bool LooksLikeJavaMethod(std::string_view name);

// The name a Java frame carries in a profile: "pkg.Cls.m", without the argument list. The
// agent's inline records name methods that way (samply's convention) while its loads add the
// arguments (names=java) or use JVM descriptors (names=jvm); one spelling per method lets
// flame graphs and pprof merge a method's compiled and inlined frames. Names that are no Java
// method spelling come back unchanged.
std::string JavaFrameName(std::string_view name);

// A load of the dump: the interpreter, a compiled Java method, or another stub. Compiled
// methods are the loads with source lines (the agent writes DEBUG_INFO and inline records only
// for them) or a Java method name (native-method wrappers have no lines).
FrameKind LoadKind(const LoadBody& load);
FrameKind KindOfName(std::string_view name);  // the same decision from a name alone

// Kernel code: an address in the upper half of the canonical address space (x86-64, arm64) or
// a DSO perf names as the kernel or a module ("[kernel.kallsyms]", "[ext4]").
bool IsKernelFrame(uint64_t addr, std::string_view dso);

// A DSO perf prints for code it has no file for, where JIT code lives: none, "[unknown]",
// a perf map (/tmp/perf-<pid>.map, which perf names even when no map exists), anonymous
// memory, a memfd, perf's "[JIT] tid N", or the ELF files `perf inject --jit` writes.
bool IsJitCandidateDso(std::string_view dso);

// For a DSO `perf inject --jit` wrote (".../jitted-<pid>-<code_index>.so"), its code_index.
bool JittedElfIndex(std::string_view dso, uint64_t* code_index);

}  // namespace jitdump::report
