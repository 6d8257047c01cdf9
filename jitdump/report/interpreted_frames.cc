// One JVM's interpreted frames named in a sample's copied stack (interpreted_frames.h).
#include "jitdump/report/interpreted_frames.h"

#include <bit>

#include "jitdump/report/classify.h"

namespace jitdump::report {

std::optional<uint64_t> SampledRegisters::Get(uint32_t reg) const {
  if (reg >= 64 || !(mask >> reg & 1)) return std::nullopt;
  const size_t index = static_cast<size_t>(std::popcount(mask & ((uint64_t{1} << reg) - 1)));
  if (index >= values.size()) return std::nullopt;
  return values[index];
}

// The dump's view for the walk: what kind of code lies at an address at the sample's time.
class InterpretedFrames::Code final : public CodeAt {
 public:
  Code(InterpretedFrames& owner, std::optional<uint64_t> time) : owner_(owner), time_(time) {}
  CodeKind KindAt(uint64_t pc) override { return owner_.KindAt(pc, time_); }

 private:
  InterpretedFrames& owner_;
  std::optional<uint64_t> time_;
};

// The method table's view: which method a Method* is at the sample's time.
class InterpretedFrames::Methods final : public MethodAt {
 public:
  Methods(const MethodTable& table, std::optional<uint64_t> time) : table_(table), time_(time) {}
  const TableMethod* Find(uint64_t method) override { return table_.Find(method, time_); }

 private:
  const MethodTable& table_;
  std::optional<uint64_t> time_;
};

InterpretedFrames::InterpretedFrames(JvmCode& code, const MethodTable& table) : code_(code), table_(table) {}

CodeKind InterpretedFrames::KindAt(uint64_t pc, std::optional<uint64_t> time) {
  const int64_t record = time ? code_.timeline().Find(pc, *time).record : code_.timeline().FindFinal(pc);
  if (record < 0) return CodeKind::kOther;
  const LoadBody* load = code_.dump().records[static_cast<size_t>(record)].load();
  if (load == nullptr) return CodeKind::kOther;
  switch (LoadKind(*load)) {
    case FrameKind::kInterpreted: return CodeKind::kInterpreter;
    case FrameKind::kCompiled: return CodeKind::kCompiled;
    default: return CodeKind::kStub;
  }
}

std::string InterpretedFrames::FrameName(const TableClass* klass, const TableMethod& method) {
  return (klass != nullptr && !klass->name.empty() ? klass->name : std::string("[unknown class]")) + "." +
         method.name;
}

std::vector<JavaFrame> InterpretedFrames::Walk(const SampledRegisters& regs, std::span<const uint8_t> stack,
                                               std::optional<uint64_t> time,
                                               std::optional<uint64_t> first_jit_return,
                                               std::optional<uint64_t> first_jit_fp, InterpretedWalkStats* stats) {
  std::vector<JavaFrame> out;
  if (!usable()) return out;
  const TableLayout& layout = *table_.layout;
  const std::optional<uint64_t> ip = regs.Get(jitdump::kPerfRegX86Ip);
  const std::optional<uint64_t> sp = regs.Get(jitdump::kPerfRegX86Sp);
  const std::optional<uint64_t> fp = regs.Get(jitdump::kPerfRegX86Bp);
  if (!ip || !sp || !fp) return out;
  Code code(*this, time);
  Methods methods(table_, time);
  JavaStackWalk walk(FrameSlots::Of(layout), code, methods);
  const StackCopy copy{*sp, stack};
  WalkResult result;
  if (code.KindAt(*ip) != CodeKind::kOther) {
    result = walk.FromRegisters({*ip, *sp, *fp, regs.Get(layout.bcp_register), regs.Get(layout.method_register),
                                 regs.Get(jitdump::kPerfRegX86Ax)},
                                copy);
  } else if (first_jit_return) {
    const std::optional<uint64_t> caller_fp =
        first_jit_fp ? first_jit_fp : walk.FindCallerFp(*first_jit_return, *fp, copy);
    if (!caller_fp) return out;
    result = walk.FromCaller(*first_jit_return, *caller_fp, copy);
  } else {
    return out;
  }
  if (stats != nullptr) {
    ++stats->walks;
    if (result.end == WalkEnd::kOutermost) ++stats->walks_outermost;
    if (result.end == WalkEnd::kStackCopyEnds) ++stats->walks_copy_ended;
    if (result.top_in_entry) ++stats->top_in_entry;
  }
  out.reserve(result.frames.size());
  for (const WalkedFrame& w : result.frames) {
    JavaFrame f;
    f.pc = w.pc;
    f.return_address = w.return_address;
    f.interpreted = w.kind == WalkedFrame::Kind::kInterpreted;
    if (f.interpreted) {
      f.method = w.method;
      f.klass = w.method != nullptr ? table_.ClassOf(*w.method) : nullptr;
      f.bci = w.bci;
      f.line = w.method != nullptr && w.bci >= 0 ? w.method->LineAt(static_cast<uint64_t>(w.bci)) : 0;
      f.covered = w.covered;
      if (stats != nullptr) {
        ++stats->frames;
        if (w.method != nullptr) ++stats->named;
        if (w.covered) ++stats->covered;
      }
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace jitdump::report
