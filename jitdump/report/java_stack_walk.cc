// Walking HotSpot's frames in a copied user stack (java_stack_walk.h).
#include "jitdump/report/java_stack_walk.h"

#include <cstring>

namespace jitdump::report {
namespace {

constexpr uint64_t kWord = 8;
// A caller's frame lies above its callee's; further than this above it is no frame pointer
// (HotSpot's largest frames are far smaller; thread stacks are 1 MiB by default).
constexpr uint64_t kMaxFrameSize = 16u << 20;

uint64_t SlotAddress(uint64_t fp, int32_t slot) {
  return fp + static_cast<uint64_t>(static_cast<int64_t>(slot) * static_cast<int64_t>(kWord));
}

// Whether `value` (a register) is a caller's sp as a method entry or return holds it: between
// sp and rbp, the caller's frame.
bool SenderSp(const WalkRegisters& regs, std::optional<uint64_t> value) {
  return value && *value >= regs.sp && *value <= regs.fp;
}

// Whether `next` can be the frame pointer of the caller of the frame at `fp`.
bool PlausibleCaller(uint64_t fp, uint64_t next) {
  return next > fp && next - fp <= kMaxFrameSize && next % kWord == 0;
}

}  // namespace

bool StackCopy::Word(uint64_t addr, uint64_t* value) const {
  if (addr < sp || addr - sp > bytes.size() || bytes.size() - (addr - sp) < kWord) return false;
  std::memcpy(value, bytes.data() + (addr - sp), kWord);
  return true;
}

bool JavaStackWalk::SetBci(WalkedFrame& frame, uint64_t bcp) {
  if (frame.method == nullptr || !frame.method->Contains(bcp)) return false;
  frame.bci = static_cast<int64_t>(bcp - frame.method->code_base);
  return true;
}

bool JavaStackWalk::DecodeInterpreted(uint64_t fp, const StackCopy& stack, WalkedFrame* frame) {
  uint64_t method = 0;
  if (!stack.Word(SlotAddress(fp, slots_.method_slot), &method)) return false;
  frame->method_ptr = method;
  frame->covered = true;
  const TableMethod* m = methods_.Find(method);
  if (m == nullptr) return false;
  if (m->native()) {  // no bytecodes: the slot holds 0
    frame->method = m;
    frame->bci = -1;
    return true;
  }
  uint64_t bcp = 0;
  if (!stack.Word(SlotAddress(fp, slots_.bcp_slot), &bcp) || !m->Contains(bcp)) return false;
  frame->method = m;
  return SetBci(*frame, bcp);
}

bool JavaStackWalk::IntoCallerCode(uint64_t pc) {
  const CodeKind caller = code_.KindAt(pc);
  return caller == CodeKind::kCompiled || caller == CodeKind::kStub;
}

bool JavaStackWalk::EnteredFromCode(const WalkRegisters& regs, const StackCopy& stack, WalkedFrame* top,
                                    uint64_t* return_address) {
  if (!regs.method) return false;
  if (!stack.Word(regs.sp, return_address) || !IntoCallerCode(*return_address)) {
    // Laying out the locals: the caller's sp in r13, the return address in rax.
    if (!SenderSp(regs, regs.bcp) || !regs.entry_return || !IntoCallerCode(*regs.entry_return)) return false;
    *return_address = *regs.entry_return;
  }
  const TableMethod* m = methods_.Find(*regs.method);
  if (m == nullptr) return false;
  top->method = m;
  top->method_ptr = *regs.method;
  top->bci = m->native() ? -1 : 0;
  top->covered = true;
  return true;
}

bool JavaStackWalk::ReturningToCode(const WalkRegisters& regs, const StackCopy& stack, uint64_t* return_address) {
  if (!SenderSp(regs, regs.method)) return false;  // rbx holds the caller's sp
  if (regs.bcp && IntoCallerCode(*regs.bcp)) {  // popped into r13
    *return_address = *regs.bcp;
    return true;
  }
  return stack.Word(regs.sp, return_address) && IntoCallerCode(*return_address);
}

void JavaStackWalk::CallerFromCode(uint64_t return_address, uint64_t fp, const StackCopy& stack, WalkResult& out) {
  WalkedFrame caller;
  caller.pc = return_address;
  caller.return_address = true;
  out.frames.push_back(caller);
  Callers(fp, stack, out);
}

void JavaStackWalk::Callers(uint64_t fp, const StackCopy& stack, WalkResult& out) {
  while (true) {
    if (out.frames.size() >= kMaxFrames) {
      out.end = WalkEnd::kMaxFrames;
      return;
    }
    uint64_t next = 0;
    uint64_t ret = 0;
    if (!stack.Word(fp, &next) || !stack.Word(fp + kWord, &ret)) {
      out.end = fp < stack.sp ? WalkEnd::kBrokenChain : WalkEnd::kStackCopyEnds;
      return;
    }
    if (ret == 0) {
      out.end = WalkEnd::kOutermost;
      return;
    }
    WalkedFrame frame;
    frame.pc = ret;
    frame.return_address = true;
    const CodeKind kind = code_.KindAt(ret);
    if (kind == CodeKind::kInterpreter) {
      frame.kind = WalkedFrame::Kind::kInterpreted;
      if (PlausibleCaller(fp, next) && !DecodeInterpreted(next, stack, &frame)) frame.method = nullptr;
    }
    out.frames.push_back(frame);
    if (next == 0) {
      out.end = WalkEnd::kOutermost;
      return;
    }
    if (!PlausibleCaller(fp, next)) {
      out.end = WalkEnd::kBrokenChain;
      return;
    }
    fp = next;
  }
}

WalkResult JavaStackWalk::FromRegisters(const WalkRegisters& regs, const StackCopy& stack) {
  WalkResult out;
  WalkedFrame top;
  top.pc = regs.ip;
  if (code_.KindAt(regs.ip) == CodeKind::kInterpreter) {
    top.kind = WalkedFrame::Kind::kInterpreted;
    const uint64_t complete_at = SlotAddress(regs.fp, slots_.complete_slot);
    const bool complete = regs.fp >= regs.sp && complete_at >= regs.sp;
    uint64_t return_address = 0;
    if (complete && DecodeInterpreted(regs.fp, stack, &top)) {
      // Between bytecodes the register holds other things (a sender sp, a return address);
      // inside the method's bytecodes it is the live one, newer than the slot.
      if (regs.bcp) (void)SetBci(top, *regs.bcp);
    } else if (ReturningToCode(regs, stack, &return_address)) {
      // The returning method's frame is gone and rbp is the caller's again: the sample is the
      // caller's, at its call, as when the caller is an interpreted frame.
      CallerFromCode(return_address, regs.fp, stack, out);
      return out;
    } else if (complete && EnteredFromCode(regs, stack, &top, &return_address)) {
      // A method entry called from compiled code or the call stub, before its frame exists:
      // the pc is the entry's, the method in its register, rbp and the return address (on top
      // of the stack or in rax) still the caller's.
      out.top_in_entry = true;
      out.frames.push_back(top);
      CallerFromCode(return_address, regs.fp, stack, out);
      return out;
    } else if (complete) {
      top.method = nullptr;
    } else if (regs.method) {
      // A method entry: the frame's slots are not written yet; the method being entered is
      // in its register.
      top.method_ptr = *regs.method;
      top.covered = true;
      top.method = methods_.Find(*regs.method);
      top.bci = top.method != nullptr && !top.method->native() ? 0 : -1;
      out.top_in_entry = top.method != nullptr;
    }
  }
  out.frames.push_back(top);
  Callers(regs.fp, stack, out);
  return out;
}

WalkResult JavaStackWalk::FromCaller(uint64_t return_address, uint64_t fp, const StackCopy& stack) {
  WalkResult out;
  WalkedFrame frame;
  frame.pc = return_address;
  frame.return_address = true;
  if (code_.KindAt(return_address) == CodeKind::kInterpreter) {
    frame.kind = WalkedFrame::Kind::kInterpreted;
    if (!DecodeInterpreted(fp, stack, &frame)) frame.method = nullptr;
  }
  out.frames.push_back(frame);
  Callers(fp, stack, out);
  return out;
}

std::optional<uint64_t> JavaStackWalk::FindCallerFp(uint64_t return_address, uint64_t sampled_fp,
                                                    const StackCopy& stack) {
  uint64_t fp = sampled_fp;
  for (size_t i = 0; i < kMaxFrames; ++i) {
    uint64_t next = 0;
    uint64_t ret = 0;
    if (!stack.Word(fp, &next) || !stack.Word(fp + kWord, &ret)) break;
    if (ret == return_address) return PlausibleCaller(fp, next) ? std::optional<uint64_t>(next) : std::nullopt;
    if (!PlausibleCaller(fp, next)) break;
    fp = next;
  }
  // A function that keeps no frame (a leaf the interpreter called) leaves the interpreted
  // frame's own pointer in the register: taken only when its slots name a known method.
  if (code_.KindAt(return_address) == CodeKind::kInterpreter) {
    WalkedFrame frame;
    if (DecodeInterpreted(sampled_fp, stack, &frame)) return sampled_fp;
  }
  return std::nullopt;
}

}  // namespace jitdump::report
