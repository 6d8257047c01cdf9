#include "jitdump/report/classify.h"

#include <algorithm>

namespace jitdump::report {
namespace {

bool HasSpace(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// "pkg.Cls.m", "Cls.m", "pkg.Cls$Inner.<init>", "pkg.LambdaForm$MH/0x800c0c000.invoke": at
// least two non-empty dot-separated parts, no spaces. Hidden classes carry "/0x..." in the
// class part, so a slash alone does not disqualify.
bool IsDottedPath(std::string_view s) {
  if (s.empty() || HasSpace(s) || s.front() == '.' || s.back() == '.') return false;
  if (s.find("..") != std::string_view::npos) return false;
  return s.find('.') != std::string_view::npos;
}

}  // namespace

bool LooksLikeJavaMethod(std::string_view name) {
  const size_t paren = name.find('(');
  if (paren == std::string_view::npos) return IsDottedPath(name);  // names=simple
  const std::string_view head = name.substr(0, paren);
  // names=jvm: "Lpkg/Cls;m(...)R": a class descriptor, its ';', the method name.
  if (head.size() > 2 && head[0] == 'L' && !HasSpace(head)) {
    const size_t semicolon = head.find(';');
    if (semicolon != std::string_view::npos && semicolon > 1 && semicolon + 1 < head.size()) return true;
  }
  // names=java: "pkg.Cls.m(args)", the argument list closing the name.
  if (name.back() != ')') return false;
  const std::string_view args = name.substr(paren + 1, name.size() - paren - 2);
  return IsDottedPath(head) && args.find('(') == std::string_view::npos;
}

std::string JavaFrameName(std::string_view name) {
  const size_t paren = name.find('(');
  if (paren == std::string_view::npos || !LooksLikeJavaMethod(name)) return std::string(name);
  const std::string_view head = name.substr(0, paren);
  const size_t semicolon = head.find(';');
  if (head[0] == 'L' && semicolon != std::string_view::npos) {
    // "Lpkg/Cls;m" -> "pkg.Cls.m"
    std::string out(head.substr(1, semicolon - 1));
    for (char& c : out) c = c == '/' ? '.' : c;
    return out + "." + std::string(head.substr(semicolon + 1));
  }
  return std::string(head);
}

FrameKind KindOfName(std::string_view name) {
  if (name == "Interpreter") return FrameKind::kInterpreted;
  return LooksLikeJavaMethod(name) ? FrameKind::kCompiled : FrameKind::kStub;
}

FrameKind LoadKind(const LoadBody& load) {
  if (load.name == "Interpreter") return FrameKind::kInterpreted;
  if (load.debug_info >= 0 || load.inline_info >= 0) return FrameKind::kCompiled;
  return KindOfName(load.name);
}

bool IsKernelFrame(uint64_t addr, std::string_view dso) {
  if ((addr >> 48) == 0xffff) return true;
  if (dso == "[kernel.kallsyms]" || dso == "[guest.kernel.kallsyms]") return true;
  // Modules: "[ext4]". perf's other bracketed names are user space.
  return dso.size() > 2 && dso.front() == '[' && dso.back() == ']' && dso != "[unknown]" && dso != "[vdso]" &&
         dso != "[vsyscall]" && dso != "[heap]" && dso != "[stack]" && dso.substr(0, 5) != "[JIT]" &&
         dso.substr(0, 6) != "[anon:";
}

bool IsJitCandidateDso(std::string_view dso) {
  if (dso.empty() || dso == "[unknown]" || dso == "//anon" || dso.substr(0, 6) == "[anon:" ||
      dso.substr(0, 5) == "[JIT]" || dso.substr(0, 7) == "/memfd:") {
    return true;
  }
  const size_t slash = dso.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? dso : dso.substr(slash + 1);
  if (base.substr(0, 5) == "perf-" && base.size() > 9 && base.substr(base.size() - 4) == ".map") return true;
  uint64_t index;
  return JittedElfIndex(dso, &index);
}

bool JittedElfIndex(std::string_view dso, uint64_t* code_index) {
  const size_t slash = dso.rfind('/');
  std::string_view base = slash == std::string_view::npos ? dso : dso.substr(slash + 1);
  if (base.size() < 11 || base.substr(0, 7) != "jitted-" || base.substr(base.size() - 3) != ".so") return false;
  base = base.substr(7, base.size() - 10);  // "<pid>-<index>"
  const size_t dash = base.find('-');
  if (dash == std::string_view::npos || dash == 0) return false;
  const std::string_view index = base.substr(dash + 1);
  if (index.empty() || index.size() > 19) return false;
  uint64_t value = 0;
  for (char c : index) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *code_index = value;
  return true;
}

}  // namespace jitdump::report
