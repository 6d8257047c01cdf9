// One JVM's interpreted frames in a sample's copied stack (jitdump/report/interpreted_frames.h):
// a dump (the Interpreter blob, a compiled method, the call stub) and a method table, both built
// here, and a stack laid out as HotSpot's x86-64 interpreter lays it out. What lies at an
// address and what a Method* is both follow the sample's time; the walk starts from the
// sample's registers (pc in JIT code) or from the first JIT frame perf's DWARF unwinding reached;
// the statistics count what was named.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "cpp-tests/reader_test_builder.h"
#include "jitdump/write/method_table_file.h"
#include "jitdump/read/decoder.h"
#include "jitdump/report/interpreted_frames.h"

namespace jitdump::report {
namespace {

constexpr uint64_t kInterp = 0x7f0000100000;
constexpr uint64_t kCompiled = 0x7f0000200000;
constexpr uint64_t kCallStub = 0x7f0000300000;
constexpr uint64_t kSp = 0x7ffd00000000;
constexpr uint64_t kOuter = 0x7e0000010000;  // Method*s
constexpr uint64_t kInner = 0x7e0000020000;

std::unique_ptr<JvmCode> Dump() {
  testing::Builder b;
  b.Header(1, 40, 10);
  b.Load(20, kInterp, 0x1000, 1, "Interpreter");
  b.Load(30, kCallStub, 0x100, 2, "call_stub");
  b.Load(5000, kCompiled, 0x100, 3, "p.Chain.main(java.lang.String[])");
  return JvmCode::FromDump("/nonexistent/jit-1.dump", Parse(b.bytes()));
}

MethodTable Table() {
  const MethodTableHeader header = MakeMethodTableHeader(1, 10);
  std::vector<uint8_t> t(reinterpret_cast<const uint8_t*>(&header),
                         reinterpret_cast<const uint8_t*>(&header) + sizeof header);
  MethodTableLayout layout;
  layout.elf_machine = 62;
  layout.jvm_feature = 17;
  layout.method_slot = -3;
  layout.bcp_slot = -8;
  layout.complete_slot = -9;
  layout.bcp_register = kPerfRegX86R13;
  layout.method_register = kPerfRegX86Bx;
  EXPECT_TRUE(AppendLayoutRecord(t, 10, layout));
  EXPECT_TRUE(AppendClassRecord(t, {0, 1, "p.Chain", "p/Chain.java"}));
  const MethodTableLine outer_lines[] = {{0, 16}, {7, 17}, {25, 19}};
  const MethodTableLine inner_lines[] = {{0, 31}, {7, 32}, {19, 33}};
  MethodTableMethod m;
  m.class_id = 1;
  m.code_size = 40;
  m.descriptor = "(I)V";
  m.serial = 1, m.method = kOuter, m.code_base = kOuter + 0x1000, m.name = "outer", m.lines = outer_lines;
  EXPECT_TRUE(AppendMethodRecord(t, m));
  m.serial = 2, m.method = kInner, m.code_base = kInner + 0x1000, m.name = "inner", m.lines = inner_lines;
  EXPECT_TRUE(AppendMethodRecord(t, m));
  AppendRetireRecord(t, 9000, 2, kInner);  // inner's class unloaded at 9000
  return ParseMethodTable(t);
}

void Put(std::vector<uint8_t>& stack, uint64_t addr, uint64_t value) {
  std::memcpy(stack.data() + (addr - kSp), &value, 8);
}

// inner (interpreted, top) <- outer (interpreted) <- compiled main <- call stub <- the end.
std::vector<uint8_t> Stack() {
  std::vector<uint8_t> s(0x600, 0);
  const uint64_t inner = kSp + 0x100, outer = kSp + 0x200, main = kSp + 0x300, stub = kSp + 0x400;
  Put(s, inner, outer);
  Put(s, inner + 8, kInterp + 0x40);
  Put(s, inner - 24, kInner);
  Put(s, inner - 64, kInner + 0x1000 + 3);
  Put(s, outer, main);
  Put(s, outer + 8, kCompiled + 0x20);
  Put(s, outer - 24, kOuter);
  Put(s, outer - 64, kOuter + 0x1000 + 26);
  Put(s, main, stub);
  Put(s, main + 8, kCallStub + 0x10);
  Put(s, stub, 0);
  Put(s, stub + 8, 0);
  return s;
}

// Registers as perf samples them: ip, sp, bp, bx and r13 (a mask of those bits).
SampledRegisters Regs(uint64_t ip, uint64_t fp, uint64_t r13) {
  SampledRegisters r;
  r.mask = (1ull << kPerfRegX86Bx) | (1ull << kPerfRegX86Bp) | (1ull << kPerfRegX86Sp) | (1ull << kPerfRegX86Ip) |
           (1ull << kPerfRegX86R13);
  r.values = {0 /* bx */, fp, kSp, ip, r13};
  return r;
}

TEST(InterpretedFrames, RegistersAreReadByTheirPerfNumbers) {
  const SampledRegisters r = Regs(1, 2, 3);
  EXPECT_EQ(r.Get(kPerfRegX86Ip), 1u);
  EXPECT_EQ(r.Get(kPerfRegX86Bp), 2u);
  EXPECT_EQ(r.Get(kPerfRegX86R13), 3u);
  EXPECT_EQ(r.Get(kPerfRegX86Sp), kSp);
  EXPECT_FALSE(r.Get(2)) << "cx was not sampled";
  EXPECT_FALSE(r.Get(64));
}

TEST(InterpretedFrames, NamesTheChainAtTheSamplesTime) {
  std::unique_ptr<JvmCode> code = Dump();
  const MethodTable table = Table();
  InterpretedFrames frames(*code, table);
  ASSERT_TRUE(frames.usable());
  EXPECT_EQ(frames.KindAt(kInterp + 8, 6000), CodeKind::kInterpreter);
  EXPECT_EQ(frames.KindAt(kCompiled + 8, 6000), CodeKind::kCompiled);
  EXPECT_EQ(frames.KindAt(kCallStub + 8, 6000), CodeKind::kStub);
  EXPECT_EQ(frames.KindAt(0x1234, 6000), CodeKind::kOther);
  const std::vector<uint8_t> stack = Stack();
  InterpretedWalkStats stats;
  const std::vector<JavaFrame> f =
      frames.Walk(Regs(kInterp + 0x10, kSp + 0x100, kInner + 0x1000 + 20), stack, 6000, std::nullopt, std::nullopt,
                  &stats);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_TRUE(f[0].interpreted);
  ASSERT_NE(f[0].method, nullptr);
  EXPECT_EQ(InterpretedFrames::FrameName(f[0].klass, *f[0].method), "p.Chain.inner");
  EXPECT_EQ(f[0].bci, 20);
  EXPECT_EQ(f[0].line, 33u);
  ASSERT_NE(f[1].method, nullptr);
  EXPECT_EQ(f[1].method->name, "outer");
  EXPECT_EQ(f[1].line, 19u);
  EXPECT_TRUE(f[1].return_address);
  EXPECT_FALSE(f[2].interpreted);
  EXPECT_EQ(f[2].pc, kCompiled + 0x20);
  EXPECT_EQ(f[3].pc, kCallStub + 0x10);
  EXPECT_EQ(stats.walks, 1u);
  EXPECT_EQ(stats.walks_outermost, 1u);
  EXPECT_EQ(stats.frames, 2u);
  EXPECT_EQ(stats.named, 2u);
  EXPECT_EQ(stats.covered, 2u);

  // After inner's class was unloaded (9000), its Method* names nothing: the frame is anonymous.
  const std::vector<JavaFrame> later =
      frames.Walk(Regs(kInterp + 0x10, kSp + 0x100, 0), stack, 9500, std::nullopt, std::nullopt, &stats);
  ASSERT_FALSE(later.empty());
  EXPECT_TRUE(later[0].interpreted);
  EXPECT_EQ(later[0].method, nullptr);
  EXPECT_TRUE(later[0].covered);
  EXPECT_EQ(stats.named, 3u);
  EXPECT_EQ(stats.frames, 4u);
  // Before the compiled main was loaded (5000) its return address is no code the dump knows:
  // the walk still follows the chain.
  const std::vector<JavaFrame> early =
      frames.Walk(Regs(kInterp + 0x10, kSp + 0x100, 0), stack, 4000, std::nullopt, std::nullopt, nullptr);
  ASSERT_EQ(early.size(), 4u);
  EXPECT_FALSE(early[2].interpreted);
}

TEST(InterpretedFrames, FromTheFirstJitFrameOfADwarfUnwinding) {
  std::unique_ptr<JvmCode> code = Dump();
  const MethodTable table = Table();
  InterpretedFrames frames(*code, table);
  std::vector<uint8_t> stack = Stack();
  // The sample is in libc, called from inner's frame with a frame pointer of its own.
  Put(stack, kSp + 0x20, kSp + 0x100);
  Put(stack, kSp + 0x28, kInterp + 0x77);
  InterpretedWalkStats stats;
  std::vector<JavaFrame> f = frames.Walk(Regs(0x7f5500001000, kSp + 0x20, 0), stack, 6000, kInterp + 0x77,
                                         std::nullopt, &stats);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_TRUE(f[0].return_address);
  EXPECT_EQ(f[0].pc, kInterp + 0x77);
  ASSERT_NE(f[0].method, nullptr);
  EXPECT_EQ(f[0].method->name, "inner");
  EXPECT_EQ(f[0].line, 31u) << "the slot's bytecode pointer: bci 3";
  EXPECT_EQ(f[1].method->name, "outer");
  // The unwinder's own frame pointer wins over the chain.
  f = frames.Walk(Regs(0x7f5500001000, 0, 0), stack, 6000, kInterp + 0x77, kSp + 0x100, &stats);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].method->name, "inner");
  // No JIT frame at all: nothing to walk.
  EXPECT_TRUE(frames.Walk(Regs(0x7f5500001000, kSp + 0x20, 0), stack, 6000, std::nullopt, std::nullopt, &stats)
                  .empty());
  EXPECT_EQ(stats.walks, 2u);
}

TEST(InterpretedFrames, ATableWithoutALayoutWalksNothing) {
  std::unique_ptr<JvmCode> code = Dump();
  const MethodTable empty = ParseMethodTable({});
  InterpretedFrames frames(*code, empty);
  EXPECT_FALSE(frames.usable());
  EXPECT_TRUE(frames.Walk(Regs(kInterp + 0x10, kSp + 0x100, 0), Stack(), 6000, std::nullopt, std::nullopt, nullptr)
                  .empty());
}

}  // namespace
}  // namespace jitdump::report
