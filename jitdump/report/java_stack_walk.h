// Walks the Java frames of a sample's copied user stack (`perf record --call-graph dwarf`: the
// user registers and the stack bytes from sp up), naming HotSpot's interpreted frames.
//
// HotSpot's template interpreter, its compiled code under -XX:+PreserveFramePointer and its
// call stub keep a frame-pointer chain: at a frame pointer fp, [fp] is the caller's frame
// pointer and [fp + 8] the return address into the caller. An interpreted frame also keeps its
// method (a Method*) and its bytecode pointer in fixed slots below fp; the method table beside
// the dump (method_table_format.h) says which slots, and turns the Method* into a method and
// the bytecode pointer into a bytecode index. Perf's own unwinders stop at the first JIT frame
// (HotSpot's code has no unwind tables); this walk goes on through every frame the chain
// reaches inside the stack copy.
//
// The topmost frame, when the sampled pc is in the interpreter:
//  - its frame complete (sp at or below fp + complete_slot words): the method in its slot, the
//    bytecode pointer in the live register (r13) while it points into that method's bytecodes,
//    else in the slot (the register holds something else between bytecodes: a sender sp during
//    a call, a return address while returning);
//  - its frame still being built (a method entry, sp above that): the method being entered is
//    in the method register (rbx), at bytecode 0;
//  - a method entry before its frame exists, called from compiled code (through the c2i
//    adapter, which jumps) or from the call stub (the VM calling Java: a thread's run(), a class
//    initializer, a reflective call): rbp is still the caller's, and the method is in rbx, at
//    bytecode 0. The return address into the caller is on top of the stack, except while the
//    entry lays out the new frame's locals: it pops the return address into rax, pushes the
//    locals where it was, and pushes it back below them (templateInterpreterGenerator_x86.cpp,
//    generate_normal_entry and generate_native_entry; seen on JDK 17 and 25). All that time r13
//    holds the caller's sp, between sp and rbp, which tells this window from the rest of the
//    interpreter. (The call stub's frame looks half like an interpreted one: its own Method*
//    slot names the method it calls, but its bytecode slot holds a saved register.) Called from
//    an interpreted frame, rbp is that caller's complete frame, and the sample is the caller's,
//    at its call.
//  - a method returning to compiled code or the call stub, its frame already removed: rbp is
//    the caller's again, rbx holds the caller's sp (between sp and rbp) and the return address
//    is on top of the stack until the interpreter pops it into r13 to jump there
//    (InterpreterMacroAssembler::remove_activation). No Java frame is left to name: the sample
//    is the caller's, at its call.
// A frame's method counts only when the table knows it at the sample's time and its bytecode
// pointer lies inside that method (or the method is native), so a stale word of the stack is
// never taken for a frame.
//
// No perf, no files here: the caller says what code lies at an address and which method a
// Method* is (interfaces below), and gets frames back.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "jitdump/read/method_table.h"

namespace jitdump::report {

// What lies at a code address, as the dump says (at the sample's time).
enum class CodeKind : uint8_t {
  kInterpreter,  // the "Interpreter" blob
  kCompiled,     // a compiled Java method
  kStub,         // other JIT-area code: the call stub, adapters, runtime stubs
  kOther,        // not JIT code: native code, or nothing known
};

class CodeAt {
 public:
  virtual ~CodeAt() = default;
  virtual CodeKind KindAt(uint64_t pc) = 0;
};

// The method a Method* is at the sample's time, or null.
class MethodAt {
 public:
  virtual ~MethodAt() = default;
  virtual const TableMethod* Find(uint64_t method) = 0;
};

// The bytes perf copied from the user stack: `bytes[0]` is at address `sp`.
struct StackCopy {
  uint64_t sp = 0;
  std::span<const uint8_t> bytes;
  // The 8 bytes at `addr`, when all of them were copied.
  bool Word(uint64_t addr, uint64_t* value) const;
};

// The registers the walk reads (perf's sampled user registers).
struct WalkRegisters {
  uint64_t ip = 0;
  uint64_t sp = 0;
  uint64_t fp = 0;                     // rbp
  std::optional<uint64_t> bcp;         // the layout's bcp_register (r13), when sampled
  std::optional<uint64_t> method;      // the layout's method_register (rbx), when sampled
  std::optional<uint64_t> entry_return;  // rax: a method entry's return address while it lays out locals
};

struct WalkedFrame {
  enum class Kind : uint8_t {
    kInterpreted,  // a frame of the interpreter: `method` (null when unknown) and `bci`
    kCode,         // any other frame: look `pc` up (compiled Java, a stub, native code)
  };
  Kind kind = Kind::kCode;
  uint64_t pc = 0;
  // `pc` is a return address (every frame but the topmost): look it up one byte earlier.
  bool return_address = false;
  const TableMethod* method = nullptr;
  int64_t bci = -1;  // -1: unknown (no bytecode pointer inside the method, or a native method)
  uint64_t method_ptr = 0;  // the Method* the frame held (0 when none could be read)
  // An interpreted frame whose method slot lay inside the stack copy: a null `method` then
  // means the table does not know it (or its bytecode pointer was not inside it), not that
  // perf copied too little of the stack.
  bool covered = false;
};

enum class WalkEnd : uint8_t {
  kOutermost,      // a zero return address or frame pointer: the thread's first frame
  kStackCopyEnds,  // the next frame lies past the bytes perf copied (a deeper stack than the copy)
  kBrokenChain,    // a frame pointer that cannot be one (not above the last, misaligned)
  kMaxFrames,
};

struct WalkResult {
  std::vector<WalkedFrame> frames;  // innermost first
  WalkEnd end = WalkEnd::kOutermost;
  // The topmost frame was an interpreted frame still being built (named from the method
  // register).
  bool top_in_entry = false;
};

// Where the interpreter keeps what (from the table's LAYOUT).
struct FrameSlots {
  int32_t method_slot = -3;
  int32_t bcp_slot = -8;
  int32_t complete_slot = -9;
  static FrameSlots Of(const TableLayout& layout) {
    return {layout.method_slot, layout.bcp_slot, layout.complete_slot};
  }
};

class JavaStackWalk {
 public:
  static constexpr size_t kMaxFrames = 4096;

  JavaStackWalk(FrameSlots slots, CodeAt& code, MethodAt& methods) : slots_(slots), code_(code), methods_(methods) {}

  // From the sampled registers, whose pc is JIT code (CodeAt says what it is): the frame at the
  // pc, then every caller the frame-pointer chain reaches.
  WalkResult FromRegisters(const WalkRegisters& regs, const StackCopy& stack);

  // From a caller frame some other unwinder reached (perf's DWARF unwinding of native frames
  // stops at the first JIT frame): `return_address` is its pc (a return address into JIT
  // code) and `fp` its frame pointer.
  WalkResult FromCaller(uint64_t return_address, uint64_t fp, const StackCopy& stack);

  // The frame pointer of the caller frame at `return_address`, found in the chain from the
  // sampled fp (when the native frames above it keep frame pointers), or fp itself when that
  // is an interpreted frame of a known method (a leaf function the interpreter called keeps
  // no frame). Nothing when neither.
  std::optional<uint64_t> FindCallerFp(uint64_t return_address, uint64_t sampled_fp, const StackCopy& stack);

 private:
  // An interpreted frame at fp, its Method* and bytecode pointer from their slots; false when
  // the slots do not hold a method the table knows with a bytecode pointer inside it.
  bool DecodeInterpreted(uint64_t fp, const StackCopy& stack, WalkedFrame* frame);
  // The method entry case above: the entered method from the register, and the return address
  // into the compiled caller or the call stub, on top of the stack or (while the entry lays out
  // the locals) in its register; false when the registers and stack are not that.
  bool EnteredFromCode(const WalkRegisters& regs, const StackCopy& stack, WalkedFrame* top, uint64_t* return_address);
  // The return case above: the return address into the caller; false when the registers and
  // stack are not that.
  bool ReturningToCode(const WalkRegisters& regs, const StackCopy& stack, uint64_t* return_address);
  // Whether `pc` is code that calls into the interpreter without an interpreted frame: compiled
  // Java or a stub (the call stub, an adapter).
  bool IntoCallerCode(uint64_t pc);
  // Sets the frame's bci from `bcp` when it points into its method.
  static bool SetBci(WalkedFrame& frame, uint64_t bcp);
  // Adds the frame of compiled code or a stub that called the interpreter, at `return_address`,
  // whose frame pointer is `fp` (rbp, still the caller's), then its callers.
  void CallerFromCode(uint64_t return_address, uint64_t fp, const StackCopy& stack, WalkResult& out);
  // Follows the chain from the frame at `fp` (already in `out`), adding its callers.
  void Callers(uint64_t fp, const StackCopy& stack, WalkResult& out);

  FrameSlots slots_;
  CodeAt& code_;
  MethodAt& methods_;
};

}  // namespace jitdump::report
