// One JVM's interpreted frames named in a sample's copied user stack: the stack walk
// (java_stack_walk.h) over what the JVM's dump says lies at each address at the sample's time
// (the "Interpreter" blob, compiled methods, stubs) and what its method table says each Method*
// is at that time. A sample comes with perf's user registers and stack bytes
// (`perf record --call-graph dwarf`); its frames come back innermost first, each either a code
// address to look up as any other frame or an interpreted frame with its method and line.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jitdump/read/method_table.h"
#include "jitdump/report/java_stack_walk.h"
#include "jitdump/report/jvm_code.h"

namespace jitdump::report {

// The user registers perf sampled: one value per bit of `mask` (perf's register numbers: on
// x86-64 PERF_REG_X86_SP is 7, IP 8, BP 6), in bit order.
struct SampledRegisters {
  uint64_t mask = 0;
  std::vector<uint64_t> values;
  std::optional<uint64_t> Get(uint32_t reg) const;
};

// What the walk of one sample found, for the report's statistics.
struct InterpretedWalkStats {
  uint64_t walks = 0;            // samples walked (with registers and stack bytes, in a JVM with a table)
  uint64_t walks_outermost = 0;  // ... whose walk reached the thread's first frame
  uint64_t walks_copy_ended = 0; // ... whose walk ran past the bytes perf copied
  uint64_t frames = 0;           // interpreted frames met
  uint64_t named = 0;            // ... whose method the table gave
  uint64_t covered = 0;          // ... whose Method* slot lay inside the copy
  uint64_t top_in_entry = 0;     // the sample's own interpreted frame still being built
};

// One frame of a walked sample.
struct JavaFrame {
  bool interpreted = false;
  uint64_t pc = 0;               // the code address (interpreted frames: the interpreter's pc)
  bool return_address = false;   // look `pc` up one byte earlier
  // Interpreted frames: the method and its class (null: the table does not know the Method*,
  // the frame is anonymous), the bytecode index (-1: unknown) and its line (0: unknown).
  const TableMethod* method = nullptr;
  const TableClass* klass = nullptr;
  int64_t bci = -1;
  uint32_t line = 0;
  bool covered = false;          // its Method* slot was inside the stack copy
};

class InterpretedFrames {
 public:
  // `code` and `table` must outlive this (the JVM's dump and its DUMP.methods).
  InterpretedFrames(JvmCode& code, const MethodTable& table);

  // Whether the table can be walked at all (it states a frame layout).
  bool usable() const { return table_.layout.has_value(); }

  // The frames of a sample at `time` (nullopt: the recording's clock is not the dump's; every
  // address then resolves to the dump's final code there):
  //  - when the sampled pc is JIT code: from the sample's own registers;
  //  - otherwise from `first_jit_return` (a return address into JIT code, the first frame a
  //    DWARF unwinding of the native frames reached) with its frame pointer `first_jit_fp`
  //    when the unwinder knew it, else the one the frame-pointer chain or a leaf call gives.
  // Empty when neither applies. `native` is whether the sampled pc is outside JIT code.
  std::vector<JavaFrame> Walk(const SampledRegisters& regs, std::span<const uint8_t> stack,
                              std::optional<uint64_t> time, std::optional<uint64_t> first_jit_return,
                              std::optional<uint64_t> first_jit_fp, InterpretedWalkStats* stats);

  // What lies at `pc` at `time` (the walk's view of the dump).
  CodeKind KindAt(uint64_t pc, std::optional<uint64_t> time);

  // "pkg.Cls.method": how a profile names a Java frame (the compiled frames of the same method
  // carry the same name).
  static std::string FrameName(const TableClass* klass, const TableMethod& method);

 private:
  class Code;
  class Methods;

  JvmCode& code_;
  const MethodTable& table_;
};

}  // namespace jitdump::report
