// The walk of HotSpot's frames in a copied user stack (jitdump/report/java_stack_walk.h), over
// synthetic stacks laid out as HotSpot's x86-64 interpreter lays them out (the Method* 3 words
// below the frame pointer, the bytecode pointer 8 words below, the fixed frame 9 words deep:
// checked against JDK 17 and Temurin 25 by the perf suite's interpreted-frames tests).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "jitdump/report/java_stack_walk.h"

namespace jitdump::report {
namespace {

constexpr uint64_t kInterpStart = 0x7f0000100000;
constexpr uint64_t kInterpEnd = 0x7f0000110000;
constexpr uint64_t kCompiled = 0x7f0000200000;  // a compiled method's code, 0x1000 bytes
constexpr uint64_t kCallStub = 0x7f0000300000;  // the call stub, 0x100 bytes
constexpr uint64_t kLibjvm = 0x7f1000000000;    // native code

class FakeCode : public CodeAt {
 public:
  CodeKind KindAt(uint64_t pc) override {
    if (pc >= kInterpStart && pc < kInterpEnd) return CodeKind::kInterpreter;
    if (pc >= kCompiled && pc < kCompiled + 0x1000) return CodeKind::kCompiled;
    if (pc >= kCallStub && pc < kCallStub + 0x100) return CodeKind::kStub;
    return CodeKind::kOther;
  }
};

class FakeMethods : public MethodAt {
 public:
  const TableMethod* Find(uint64_t method) override {
    const auto it = methods.find(method);
    return it == methods.end() ? nullptr : &it->second;
  }
  TableMethod& Add(uint64_t ptr, const char* name, uint32_t code_size = 64, uint32_t flags = 0) {
    TableMethod& m = methods[ptr];
    m.method = ptr;
    m.name = name;
    m.code_base = ptr + 0x1000;  // bytecodes somewhere in metaspace
    m.code_size = code_size;
    m.flags = flags;
    return m;
  }
  std::map<uint64_t, TableMethod> methods;
};

// A stack being laid out: words at addresses from `sp` up.
class Stack {
 public:
  explicit Stack(uint64_t sp, size_t bytes = 4096) : sp_(sp), bytes_(bytes, 0) {}
  void Put(uint64_t addr, uint64_t value) {
    ASSERT_GE(addr, sp_);
    ASSERT_LE(addr - sp_ + 8, bytes_.size());
    std::memcpy(bytes_.data() + (addr - sp_), &value, 8);
  }
  // An interpreted frame at fp: its link, return address, Method* and bcp slots.
  void Interpreted(uint64_t fp, uint64_t caller_fp, uint64_t return_address, uint64_t method, uint64_t bcp) {
    Put(fp, caller_fp);
    Put(fp + 8, return_address);
    Put(fp - 3 * 8, method);
    Put(fp - 8 * 8, bcp);
  }
  // Any other frame keeping a frame pointer (compiled with PreserveFramePointer, a stub, C++).
  void Linked(uint64_t fp, uint64_t caller_fp, uint64_t return_address) {
    Put(fp, caller_fp);
    Put(fp + 8, return_address);
  }
  StackCopy Copy(size_t valid = SIZE_MAX) const {
    return StackCopy{sp_, std::span<const uint8_t>(bytes_.data(), std::min(valid, bytes_.size()))};
  }
  uint64_t sp() const { return sp_; }

 private:
  uint64_t sp_;
  std::vector<uint8_t> bytes_;
};

constexpr uint64_t kSp = 0x7ffd00000000;
constexpr uint64_t kMethodA = 0x7e0000010000;  // main
constexpr uint64_t kMethodB = 0x7e0000020000;  // outer
constexpr uint64_t kMethodC = 0x7e0000030000;  // inner (the leaf)

struct Fixture {
  FakeCode code;
  FakeMethods methods;
  JavaStackWalk walk{FrameSlots{}, code, methods};
  Fixture() {
    methods.Add(kMethodA, "main");
    methods.Add(kMethodB, "outer");
    methods.Add(kMethodC, "inner");
  }
};

// C (top, interpreted) <- B (interpreted) <- compiled frame <- A (interpreted) <- call stub <- C++.
Stack ChainStack() {
  Stack s(kSp);
  const uint64_t fp_c = kSp + 0x100, fp_b = kSp + 0x200, fp_comp = kSp + 0x300, fp_a = kSp + 0x400,
                 fp_stub = kSp + 0x500, fp_cpp = kSp + 0x600;
  s.Interpreted(fp_c, fp_b, kInterpStart + 0x50, kMethodC, kMethodC + 0x1000 + 2);  // stale slot: bci 2
  s.Interpreted(fp_b, fp_comp, kCompiled + 0x40, kMethodB, kMethodB + 0x1000 + 17);
  s.Linked(fp_comp, fp_a, kInterpStart + 0x80);
  s.Interpreted(fp_a, fp_stub, kCallStub + 0x20, kMethodA, kMethodA + 0x1000 + 9);
  s.Linked(fp_stub, fp_cpp, kLibjvm + 0x1234);
  s.Linked(fp_cpp, 0, 0);
  return s;
}

// The VM calling C through the call stub: the stub's frame at kFpStub, called from C++ (kFpCpp),
// half like an interpreted one: where an interpreted frame keeps its Method*, the stub keeps the
// method it calls; where one keeps its bytecode pointer, a saved register (here a stack address).
constexpr uint64_t kFpStub = kSp + 0x200;
constexpr uint64_t kFpCpp = kSp + 0x300;
Stack CallStubStack() {
  Stack s(kSp);
  s.Linked(kFpStub, kFpCpp, kLibjvm + 0x1234);
  s.Put(kFpStub - 3 * 8, kMethodC);
  s.Put(kFpStub - 8 * 8, kSp + 0x350);
  s.Linked(kFpCpp, 0, 0);
  return s;
}

// A sample in C's interpreted frame (ChainStack's, at kSp + 0x100), with only ip, sp and rbp.
WalkRegisters InC() { return {kInterpStart + 0x10, kSp, kSp + 0x100, std::nullopt, std::nullopt, std::nullopt}; }

// A walk whose top frame is C being entered (bytecode 0, named from rbx), called from the code
// at `caller` (a return address).
void ExpectEnteredFrom(const WalkResult& r, uint64_t caller) {
  EXPECT_TRUE(r.top_in_entry);
  ASSERT_GE(r.frames.size(), 2u);
  ASSERT_NE(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[0].method->name, "inner");
  EXPECT_EQ(r.frames[0].bci, 0);
  EXPECT_EQ(r.frames[1].kind, WalkedFrame::Kind::kCode);
  EXPECT_EQ(r.frames[1].pc, caller);
  EXPECT_TRUE(r.frames[1].return_address);
}

TEST(JavaStackWalk, NamesEveryInterpretedFrameOfTheChainInOrder) {
  Fixture f;
  const Stack s = ChainStack();
  WalkRegisters regs;
  regs.ip = kInterpStart + 0x10;
  regs.sp = kSp;
  regs.fp = kSp + 0x100;
  regs.bcp = kMethodC + 0x1000 + 23;  // the live bytecode pointer: newer than the slot
  const WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  ASSERT_EQ(r.frames.size(), 6u);
  EXPECT_EQ(r.end, WalkEnd::kOutermost);
  EXPECT_FALSE(r.top_in_entry);
  const WalkedFrame& top = r.frames[0];
  EXPECT_EQ(top.kind, WalkedFrame::Kind::kInterpreted);
  ASSERT_NE(top.method, nullptr);
  EXPECT_EQ(top.method->name, "inner");
  EXPECT_EQ(top.bci, 23);
  EXPECT_FALSE(top.return_address);
  ASSERT_NE(r.frames[1].method, nullptr);
  EXPECT_EQ(r.frames[1].method->name, "outer");
  EXPECT_EQ(r.frames[1].bci, 17);
  EXPECT_TRUE(r.frames[1].return_address);
  EXPECT_EQ(r.frames[1].pc, kInterpStart + 0x50);
  EXPECT_EQ(r.frames[2].kind, WalkedFrame::Kind::kCode);
  EXPECT_EQ(r.frames[2].pc, kCompiled + 0x40);
  ASSERT_NE(r.frames[3].method, nullptr);
  EXPECT_EQ(r.frames[3].method->name, "main");
  EXPECT_EQ(r.frames[3].bci, 9);
  EXPECT_EQ(r.frames[4].pc, kCallStub + 0x20);
  EXPECT_EQ(r.frames[5].pc, kLibjvm + 0x1234);
}

TEST(JavaStackWalk, TheSlotGivesTheBytecodeWhenTheRegisterHoldsSomethingElse) {
  Fixture f;
  const Stack s = ChainStack();
  WalkRegisters regs{kInterpStart + 0x10, kSp, kSp + 0x100, kSp + 0x40 /* a sender sp */, std::nullopt, std::nullopt};
  WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  ASSERT_NE(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[0].bci, 2);
  regs.bcp.reset();  // not sampled at all
  r = f.walk.FromRegisters(regs, s.Copy());
  EXPECT_EQ(r.frames[0].bci, 2);
}

TEST(JavaStackWalk, AMethodEntryIsNamedFromTheMethodRegister) {
  Fixture f;
  Stack s = ChainStack();
  // The interpreter has pushed the return address and rbp for C's new frame (fp) and begun its
  // fixed part (8 words below fp, not 9).
  const uint64_t fp = kSp + 0x40;
  s.Linked(fp, kSp + 0x200, kInterpStart + 0x50);  // its caller is B's frame
  s.Put(fp - 3 * 8, kMethodA);                     // a stale word where the Method* will go
  s.Put(fp - 8 * 8, 0);
  WalkRegisters regs{kInterpStart + 0x10, kSp, fp, kSp + 0x60, kMethodC, std::nullopt};
  const WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  EXPECT_TRUE(r.top_in_entry);
  ASSERT_FALSE(r.frames.empty());
  ASSERT_NE(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[0].method->name, "inner") << "not the stale main";
  EXPECT_EQ(r.frames[0].bci, 0);
  ASSERT_GE(r.frames.size(), 2u);
  ASSERT_NE(r.frames[1].method, nullptr);
  EXPECT_EQ(r.frames[1].method->name, "outer");
}

TEST(JavaStackWalk, AMethodEnteredFromCompiledCodeIsNamedBeforeItsFrameExists) {
  Fixture f;
  Stack s = ChainStack();
  // The compiled frame (at kSp + 0x300) called the c2i adapter, which jumped to C's entry: the
  // return address into the compiled code is on top of the stack, rbp is the compiled frame's.
  s.Put(kSp, kCompiled + 0x66);
  WalkRegisters regs{kInterpStart + 0x10, kSp, kSp + 0x300, kSp + 0x40 /* sender sp */, kMethodC, std::nullopt};
  const WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  ExpectEnteredFrom(r, kCompiled + 0x66);
  ASSERT_EQ(r.frames.size(), 5u);
  ASSERT_NE(r.frames[2].method, nullptr);
  EXPECT_EQ(r.frames[2].method->name, "main") << "the compiled frame's caller";
  EXPECT_EQ(r.end, WalkEnd::kOutermost);
  // Without a known method in rbx, or with no return address into JIT code on top of the
  // stack, nothing is made up: the frame stays anonymous.
  regs.method = 0x7e00000f0000;
  EXPECT_EQ(f.walk.FromRegisters(regs, s.Copy()).frames[0].method, nullptr);
  regs.method = kMethodC;
  s.Put(kSp, kLibjvm + 0x10);
  EXPECT_EQ(f.walk.FromRegisters(regs, s.Copy()).frames[0].method, nullptr);
}

TEST(JavaStackWalk, AMethodEnteredFromTheCallStubIsNamedWhileItLaysOutItsLocals) {
  Fixture f;
  // The VM calls C through the call stub (CallStubStack). C's entry has popped the return
  // address into rax and pushes zeros for the locals over it; r13 holds the stub's sp (the
  // sender sp).
  Stack s = CallStubStack();
  WalkRegisters regs{kInterpStart + 0x10, kSp, kFpStub, kSp + 0x40, kMethodC, kCallStub + 0x30};
  WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  ExpectEnteredFrom(r, kCallStub + 0x30);
  ASSERT_EQ(r.frames.size(), 3u);
  EXPECT_EQ(r.frames[2].pc, kLibjvm + 0x1234);
  EXPECT_EQ(r.end, WalkEnd::kOutermost);
  // Before the pop (and after the push back) the return address is on top of the stack, and
  // rax holds anything.
  s.Put(kSp, kCallStub + 0x30);
  regs.entry_return = 0x1234;
  r = f.walk.FromRegisters(regs, s.Copy());
  ASSERT_NE(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[1].pc, kCallStub + 0x30);
  s.Put(kSp, 0);
  // Nothing is made up outside that window: rax not sampled or not a return address into JIT
  // code, or r13 not a sender sp (a bytecode pointer, an address outside sp..rbp).
  const auto anonymous = [&](WalkRegisters changed) {
    const WalkResult w = f.walk.FromRegisters(changed, s.Copy());
    return w.frames[0].method == nullptr && w.frames[0].covered && !w.top_in_entry;
  };
  regs.entry_return = kCallStub + 0x30;
  ASSERT_FALSE(anonymous(regs));
  WalkRegisters changed = regs;
  changed.entry_return.reset();
  EXPECT_TRUE(anonymous(changed));
  changed.entry_return = kLibjvm + 0x10;
  EXPECT_TRUE(anonymous(changed));
  changed = regs;
  changed.bcp = kMethodC + 0x1000 + 4;
  EXPECT_TRUE(anonymous(changed));
  changed.bcp = kFpStub + 8;
  EXPECT_TRUE(anonymous(changed));
  changed.bcp = kSp - 8;
  EXPECT_TRUE(anonymous(changed));
  changed.bcp.reset();
  EXPECT_TRUE(anonymous(changed));
  changed = regs;
  changed.method = 0x7e00000f0000;  // not a method the table knows
  EXPECT_TRUE(anonymous(changed));
}

TEST(JavaStackWalk, AMethodReturningToTheCallStubOrCompiledCodeLeavesTheSampleToItsCaller) {
  Fixture f;
  // C was called through the call stub and has removed its frame (leave): rbp is the stub's
  // again, rbx holds the stub's sp (the sender sp) and the return address into the stub is on
  // top of the stack, r13 still C's bytecode pointer.
  Stack s = CallStubStack();
  s.Put(kSp, kCallStub + 0x30);
  const uint64_t sender_sp = kSp + 0x40;
  WalkRegisters regs{kInterpStart + 0x10, kSp, kFpStub, kMethodC + 0x1000 + 7, sender_sp, std::nullopt};
  const auto expect_caller_frames = [&](const WalkResult& r) {
    ASSERT_EQ(r.frames.size(), 2u);
    EXPECT_EQ(r.frames[0].kind, WalkedFrame::Kind::kCode);
    EXPECT_EQ(r.frames[0].pc, kCallStub + 0x30);
    EXPECT_TRUE(r.frames[0].return_address);
    EXPECT_EQ(r.frames[1].pc, kLibjvm + 0x1234);
    EXPECT_FALSE(r.top_in_entry);
    EXPECT_EQ(r.end, WalkEnd::kOutermost);
  };
  expect_caller_frames(f.walk.FromRegisters(regs, s.Copy()));
  // The return address popped into r13; then sp set to the sender sp.
  s.Put(kSp, 0);
  regs.bcp = kCallStub + 0x30;
  expect_caller_frames(f.walk.FromRegisters(regs, s.Copy()));
  regs.sp = sender_sp;
  expect_caller_frames(f.walk.FromRegisters(regs, s.Copy()));
  regs.sp = kSp;
  // A compiled caller's frame too small to look complete (fewer than 9 words below its rbp).
  Stack small(kSp);
  const uint64_t fp_comp = kSp + 0x20;
  small.Linked(fp_comp, kFpStub, kCompiled + 0x80);
  small.Linked(kFpStub, kFpCpp, kLibjvm + 0x1234);
  small.Linked(kFpCpp, 0, 0);
  WalkResult r = f.walk.FromRegisters({kInterpStart + 0x10, kSp, fp_comp, kCompiled + 0x44, kSp + 0x10, std::nullopt},
                                      small.Copy());
  ASSERT_EQ(r.frames.size(), 3u);
  EXPECT_EQ(r.frames[0].pc, kCompiled + 0x44);
  EXPECT_TRUE(r.frames[0].return_address);
  EXPECT_EQ(r.frames[1].pc, kCompiled + 0x80);
  // Not that: rbx no sender sp (outside sp..rbp), or no return address into JIT code in r13
  // or on top of the stack. The frame stays anonymous.
  WalkRegisters changed = regs;
  changed.method = kFpStub + 8;
  r = f.walk.FromRegisters(changed, s.Copy());
  EXPECT_EQ(r.frames[0].kind, WalkedFrame::Kind::kInterpreted);
  EXPECT_EQ(r.frames[0].method, nullptr);
  changed = regs;
  changed.bcp = kLibjvm + 0x10;
  r = f.walk.FromRegisters(changed, s.Copy());
  EXPECT_EQ(r.frames[0].kind, WalkedFrame::Kind::kInterpreted);
  EXPECT_EQ(r.frames[0].method, nullptr);
}

TEST(JavaStackWalk, UnknownMethodsAndStaleWordsAreNotTakenForFrames) {
  Fixture f;
  Stack s = ChainStack();
  // B's slot names a method the table does not know.
  s.Put(kSp + 0x200 - 3 * 8, 0x7e00000f0000);
  WalkRegisters regs = InC();
  WalkResult r = f.walk.FromRegisters(regs, s.Copy());
  EXPECT_EQ(r.frames[1].kind, WalkedFrame::Kind::kInterpreted);
  EXPECT_EQ(r.frames[1].method, nullptr);
  EXPECT_TRUE(r.frames[1].covered);
  EXPECT_EQ(r.frames[1].method_ptr, 0x7e00000f0000u);
  EXPECT_EQ(r.frames.size(), 6u) << "the walk goes on past it";
  // A known method whose bytecode pointer is not inside it: a stale word, not a frame.
  s.Put(kSp + 0x200 - 3 * 8, kMethodB);
  s.Put(kSp + 0x200 - 8 * 8, kMethodA + 0x1000 + 3);
  r = f.walk.FromRegisters(regs, s.Copy());
  EXPECT_EQ(r.frames[1].method, nullptr);
}

TEST(JavaStackWalk, NativeMethodsHaveNoBytecodeIndex) {
  Fixture f;
  f.methods.Add(kMethodB, "nanoTime", 0, kMethodNative);
  Stack s = ChainStack();
  s.Put(kSp + 0x200 - 8 * 8, 0);  // a native method's frame has no bytecode pointer
  const WalkResult r = f.walk.FromRegisters(InC(), s.Copy());
  ASSERT_NE(r.frames[1].method, nullptr);
  EXPECT_EQ(r.frames[1].method->name, "nanoTime");
  EXPECT_EQ(r.frames[1].bci, -1);
}

TEST(JavaStackWalk, AShortCopyEndsTheWalkAndSaysSo) {
  Fixture f;
  const Stack s = ChainStack();
  // The copy ends inside A's frame: its Method* slot (fp - 24) is in, its link is not.
  const WalkResult r = f.walk.FromRegisters(InC(), s.Copy(0x400));
  EXPECT_EQ(r.end, WalkEnd::kStackCopyEnds);
  ASSERT_EQ(r.frames.size(), 4u);
  ASSERT_NE(r.frames[3].method, nullptr);
  EXPECT_EQ(r.frames[3].method->name, "main");
  // Ending before A's slots: its frame is there (the compiled frame's return address) but
  // unnamed and not covered.
  const WalkResult shorter = f.walk.FromRegisters(InC(), s.Copy(0x310));
  ASSERT_EQ(shorter.frames.size(), 4u);
  EXPECT_EQ(shorter.frames[3].method, nullptr);
  EXPECT_FALSE(shorter.frames[3].covered);
  EXPECT_EQ(shorter.end, WalkEnd::kStackCopyEnds);
}

TEST(JavaStackWalk, ABrokenChainStopsTheWalk) {
  Fixture f;
  Stack s = ChainStack();
  s.Put(kSp + 0x200, kSp + 0x100);  // B's link points below itself
  const WalkResult r = f.walk.FromRegisters(InC(), s.Copy());
  EXPECT_EQ(r.end, WalkEnd::kBrokenChain);
  EXPECT_EQ(r.frames.size(), 3u);
  // A frame pointer below sp is no frame pointer of this stack.
  const WalkResult below =
      f.walk.FromRegisters({kCompiled + 8, kSp, kSp - 0x100, std::nullopt, std::nullopt, std::nullopt}, s.Copy());
  EXPECT_EQ(below.end, WalkEnd::kBrokenChain);
  EXPECT_EQ(below.frames.size(), 1u);
}

TEST(JavaStackWalk, CallersFoundThroughNativeFramesWithFramePointers) {
  Fixture f;
  Stack s = ChainStack();
  // The sample is in libjvm, two C++ frames deep, called from C's interpreted frame.
  const uint64_t fp_native1 = kSp + 0x20, fp_native2 = kSp + 0x60;
  s.Linked(fp_native1, fp_native2, kLibjvm + 0x500);
  s.Linked(fp_native2, kSp + 0x100, kInterpStart + 0x90);
  const std::optional<uint64_t> fp = f.walk.FindCallerFp(kInterpStart + 0x90, fp_native1, s.Copy());
  ASSERT_TRUE(fp);
  EXPECT_EQ(*fp, kSp + 0x100);
  const WalkResult r = f.walk.FromCaller(kInterpStart + 0x90, *fp, s.Copy());
  ASSERT_EQ(r.frames.size(), 6u);
  ASSERT_NE(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[0].method->name, "inner");
  EXPECT_EQ(r.frames[0].bci, 2);
  EXPECT_TRUE(r.frames[0].return_address);
  EXPECT_EQ(r.frames[1].method->name, "outer");
  // A leaf function the interpreter called keeps no frame: rbp is still C's.
  const std::optional<uint64_t> leaf = f.walk.FindCallerFp(kInterpStart + 0x94, kSp + 0x100, s.Copy());
  ASSERT_TRUE(leaf);
  EXPECT_EQ(*leaf, kSp + 0x100);
  // Neither: a frame pointer that leads nowhere near it.
  EXPECT_FALSE(f.walk.FindCallerFp(kInterpStart + 0x94, kSp + 0x600, s.Copy()));
}

TEST(JavaStackWalk, AnIncompleteTopFrameWithoutAKnownMethodIsAnonymous) {
  Fixture f;
  Stack s = ChainStack();
  const uint64_t fp = kSp + 0x40;
  s.Linked(fp, kSp + 0x200, kInterpStart + 0x50);
  const WalkResult r =
      f.walk.FromRegisters({kInterpStart + 0x10, kSp, fp, std::nullopt, 0x7e00000f0000, std::nullopt}, s.Copy());
  EXPECT_FALSE(r.top_in_entry);
  EXPECT_EQ(r.frames[0].kind, WalkedFrame::Kind::kInterpreted);
  EXPECT_EQ(r.frames[0].method, nullptr);
  EXPECT_EQ(r.frames[1].method->name, "outer");
}

}  // namespace
}  // namespace jitdump::report
