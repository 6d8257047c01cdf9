#include "cpp-tests/report/test_profiles.h"

#include <random>
#include <string>
#include <vector>

namespace jitdump::report::testing {

Profile InlineDemoProfile() {
  ProfileBuilder b;
  constexpr uint64_t kPeriod = 250000;
  const std::string_view java = "demo/Inline.java";
  const uint32_t main_fn = b.AddFunction("demo.Inline.main(java.lang.String[])", java, FrameKind::kCompiled);
  const uint32_t caller = b.AddFunction("demo.Inline.caller()", java, FrameKind::kInlined);
  const uint32_t leaf = b.AddFunction("demo.Inline.leaf(int)", java, FrameKind::kCompiled);
  const uint32_t digest = b.AddFunction("demo.Inline.digest(long[])", java, FrameKind::kCompiled);
  const uint32_t mix_inlined = b.AddFunction("demo.Inline.mix(long)", java, FrameKind::kInlined);
  const uint32_t mix_compiled = b.AddFunction("demo.Inline.mix(long)", java, FrameKind::kCompiled);
  const uint32_t checksum = b.AddFunction("demo.Inline.checksum(long[])", java, FrameKind::kCompiled);
  const uint32_t interpreter = b.AddFunction("Interpreter", "", FrameKind::kInterpreted);
  const uint32_t call_stub = b.AddFunction("StubRoutines::call_stub", "", FrameKind::kStub);
  const uint32_t call_helper =
      b.AddFunction("JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, JavaThread*)", "",
                    FrameKind::kNative);
  const uint32_t start_thread = b.AddFunction("start_thread", "", FrameKind::kNative);
  const uint32_t clear_page = b.AddFunction("clear_page_erms", "", FrameKind::kKernel);
  const uint32_t page_fault = b.AddFunction("asm_exc_page_fault", "", FrameKind::kKernel);

  const uint32_t jit = b.AddMapping("[jit] jit-4242.dump", 0x7f0000000000, 0x7f0001000000, 0);
  const uint32_t libjvm =
      b.AddMapping("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", 0x7f1000000000, 0x7f1001000000, 0);
  const uint32_t libc = b.AddMapping("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f2000000000, 0x7f2000200000, 0);
  const uint32_t kernel = b.AddMapping("[kernel.kallsyms]", 0xffffffff81000000, 0xffffffff83000000, 0);

  // Caller frames sit at return address - 1, as the reader looks them up.
  const uint32_t at_leaf = b.AddLocation(0x7f0000001010, jit, {{leaf, 12}});
  const uint32_t at_leaf_14 = b.AddLocation(0x7f0000001024, jit, {{leaf, 14}});
  const uint32_t main_calls_leaf = b.AddLocation(0x7f000000203f, jit, {{caller, 20}, {main_fn, 31}});
  const uint32_t at_mix_in_digest = b.AddLocation(0x7f0000003020, jit, {{mix_inlined, 41}, {digest, 52}});
  const uint32_t main_calls_digest = b.AddLocation(0x7f000000207a, jit, {{main_fn, 33}});
  const uint32_t at_mix = b.AddLocation(0x7f0000004010, jit, {{mix_compiled, 41}});
  const uint32_t checksum_calls_mix = b.AddLocation(0x7f000000505f, jit, {{checksum, 61}});
  const uint32_t main_calls_checksum = b.AddLocation(0x7f00000020b3, jit, {{main_fn, 35}});
  const uint32_t at_interpreter = b.AddLocation(0x7f0000000800, jit, {{interpreter, 0}});
  const uint32_t stub = b.AddLocation(0x7f0000000c4f, jit, {{call_stub, 0}});
  const uint32_t helper = b.AddLocation(0x7f1000123455, libjvm, {{call_helper, 0}});
  const uint32_t thread = b.AddLocation(0x7f2000094ac2, libc, {{start_thread, 0}});
  const uint32_t clear = b.AddLocation(0xffffffff81c3e0a0, kernel, {{clear_page, 0}});
  const uint32_t fault = b.AddLocation(0xffffffff81e00b26, kernel, {{page_fault, 0}});
  const uint32_t unnamed = b.AddLocation(0x7f1000777777, libjvm, {});

  const uint32_t pid = b.AddProcess(4242, "java", "/tmp/run/jit-4242.dump");
  auto add = [&](std::vector<uint32_t> stack, uint64_t count, std::string_view thread_name = "main") {
    b.AddSample(stack, pid, thread_name, count, count * kPeriod);
  };
  add({at_leaf, main_calls_leaf, stub, helper, thread}, 600);
  add({at_mix_in_digest, main_calls_digest, stub, helper, thread}, 300);
  add({at_mix, checksum_calls_mix, main_calls_checksum, stub, helper, thread}, 200);
  add({at_interpreter, stub, helper, thread}, 50);
  add({clear, fault, at_leaf_14, main_calls_leaf, stub, helper, thread}, 30);
  add({unnamed, thread}, 20, "C2 CompilerThre");

  Profile profile = b.Take();
  profile.period_ns = kPeriod;
  profile.start_ns = 1000000000;
  profile.end_ns = profile.start_ns + 1200 * kPeriod;
  return profile;
}

namespace {

// A random call graph: every Java method has a few callees, some of which it inlines.
struct Graph {
  struct Method {
    uint32_t compiled;  // Profile function of the method compiled on its own
    uint32_t inlined;   // the same method as an inlined frame
    uint32_t first_line;
    std::vector<uint32_t> callees;
    std::vector<bool> inlines;
  };
  std::vector<Method> methods;
};

Graph RandomGraph(ProfileBuilder& b, std::mt19937_64& rng, uint32_t count) {
  static const char* const kPackages[] = {"com.example.web", "com.example.db", "com.example.cache",
                                          "com.example.json", "com.example.util", "java.util",
                                          "java.lang", "java.util.concurrent"};
  static const char* const kVerbs[] = {"get", "put", "read", "write", "parse", "encode", "find", "apply", "run", "visit"};
  Graph g;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string package = kPackages[i % std::size(kPackages)];
    const std::string cls = "Class" + std::to_string(i / 12);
    const std::string name = package + "." + cls + "." + kVerbs[rng() % std::size(kVerbs)] + std::to_string(i) +
                             "(java.lang.Object, int)";
    std::string file = package + "." + cls;
    for (char& c : file) c = c == '.' ? '/' : c;
    file += ".java";
    g.methods.push_back(Graph::Method{b.AddFunction(name, file, FrameKind::kCompiled),
                                      b.AddFunction(name, file, FrameKind::kInlined),
                                      static_cast<uint32_t>(20 + rng() % 400), {}, {}});
  }
  for (Graph::Method& m : g.methods) {
    const size_t callees = 2 + rng() % 5;
    for (size_t c = 0; c < callees; ++c) {
      m.callees.push_back(static_cast<uint32_t>(rng() % count));
      m.inlines.push_back(rng() % 10 < 3);
    }
  }
  return g;
}

// Index k of n with probability falling off as 1/(k+1)^2: a few hot paths, a long tail.
size_t Skewed(std::mt19937_64& rng, size_t n) {
  std::uniform_real_distribution<double> u(0, 1);
  const double x = u(rng);
  return std::min(n - 1, static_cast<size_t>(static_cast<double>(n) * x * x * x));
}

}  // namespace

Profile SyntheticProfile(uint64_t samples, uint64_t seed, SyntheticShape shape) {
  const bool scattered = shape == SyntheticShape::kScattered;
  ProfileBuilder b;
  std::mt19937_64 rng(seed);
  constexpr uint64_t kPeriod = 1000000;  // 1 kHz
  const Graph graph = RandomGraph(b, rng, 3000);
  const uint32_t jit = b.AddMapping("[jit] jit-1001.dump", 0x7f0000000000, 0x7f0010000000, 0);
  const uint32_t libjvm = b.AddMapping("/opt/jdk/lib/server/libjvm.so", 0x7f1000000000, 0x7f1001000000, 0);
  const uint32_t libc = b.AddMapping("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f2000000000, 0x7f2000200000, 0);
  const uint32_t kernel = b.AddMapping("[kernel.kallsyms]", 0xffffffff81000000, 0xffffffff83000000, 0);
  auto native = [&](std::string_view name, uint32_t mapping, uint64_t address, FrameKind kind) {
    return b.AddLocation(address, mapping, {{b.AddFunction(name, "", kind), 0}});
  };
  const std::vector<uint32_t> base = {
      native("JavaCalls::call_helper", libjvm, 0x7f1000123455, FrameKind::kNative),
      native("thread_native_entry", libjvm, 0x7f1000200100, FrameKind::kNative),
      native("start_thread", libc, 0x7f2000094ac2, FrameKind::kNative)};
  const uint32_t call_stub = native("StubRoutines::call_stub", jit, 0x7f0000000c4f, FrameKind::kStub);
  const uint32_t interpreter = native("Interpreter", jit, 0x7f0000000800, FrameKind::kInterpreted);
  const uint32_t arraycopy = native("StubRoutines::jlong_disjoint_arraycopy", jit, 0x7f0000000e10, FrameKind::kStub);
  const uint32_t memcpy = native("__memmove_avx_unaligned_erms", libc, 0x7f20001a0b40, FrameKind::kNative);
  const uint32_t clear_page = native("clear_page_erms", kernel, 0xffffffff81c3e0a0, FrameKind::kKernel);
  const uint32_t page_fault = native("asm_exc_page_fault", kernel, 0xffffffff81e00b26, FrameKind::kKernel);
  const uint32_t pids[] = {b.AddProcess(1001, "java", "/tmp/run/jit-1001.dump"),
                           b.AddProcess(1002, "java", "/tmp/run/jit-1002.dump")};

  // The framework chains service stacks start with (thread pools, servlet filters, ...).
  std::vector<std::vector<uint32_t>> frameworks(4);
  for (std::vector<uint32_t>& chain : frameworks) {
    const size_t length = 10 + rng() % 15;
    for (size_t i = 0; i < length; ++i) {
      const Graph::Method& m = graph.methods[rng() % graph.methods.size()];
      chain.push_back(b.AddLocation(0x7f0000008000 + rng() % 0x8000, jit, {{m.compiled, m.first_line + 3}}));
    }
  }

  // Distinct stacks first, then samples drawn from them with a skew, as real profiles are a few
  // hot paths over a long tail.
  const size_t distinct = std::max<size_t>(1, samples / (scattered ? 8 : 25));
  std::vector<std::vector<uint32_t>> stacks(distinct);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::vector<uint32_t>& stack : stacks) {
    std::vector<uint32_t> root_first(base.rbegin(), base.rend());
    root_first.push_back(call_stub);
    if (!scattered) {
      const std::vector<uint32_t>& chain = frameworks[Skewed(rng, frameworks.size())];
      root_first.insert(root_first.end(), chain.begin(), chain.end());
    }
    const size_t depth = scattered ? 6 + rng() % 50 : 3 + rng() % 22;
    uint32_t method = static_cast<uint32_t>(Skewed(rng, 40));  // a few entry points
    std::vector<Line> chain;  // the current location's inline chain, outermost first
    for (size_t d = 0; d < depth; ++d) {
      const Graph::Method& m = graph.methods[method];
      chain.push_back(Line{chain.empty() ? m.compiled : m.inlined, m.first_line + static_cast<uint32_t>(rng() % 30)});
      const size_t pick = Skewed(rng, m.callees.size());
      const bool last = d + 1 == depth;
      if (last || !m.inlines[pick]) {
        std::vector<Line> lines(chain.rbegin(), chain.rend());
        const uint64_t address = 0x7f0000010000 + (std::hash<uint64_t>{}(lines.back().function * 131 + lines[0].line +
                                                                         lines.size() * 7919) % 0xffff000);
        root_first.push_back(b.AddLocation(address, jit, lines));
        chain.clear();
        if (!last && u(rng) < 0.02) root_first.push_back(interpreter);
      }
      method = m.callees[pick];
    }
    const double tail = u(rng);
    if (tail < 0.05) {
      root_first.push_back(arraycopy);
    } else if (tail < 0.12) {
      root_first.push_back(memcpy);
    } else if (tail < 0.16) {
      root_first.push_back(page_fault);
      root_first.push_back(clear_page);
    }
    stack.assign(root_first.rbegin(), root_first.rend());
  }
  for (uint64_t s = 0; s < samples; ++s) {
    const size_t which = Skewed(rng, distinct);
    const uint32_t thread = static_cast<uint32_t>(which % 16);
    b.AddSample(stacks[which], pids[which % 2], "worker-" + std::to_string(thread), 1, kPeriod);
  }
  Profile profile = b.Take();
  profile.period_ns = kPeriod;
  profile.start_ns = 5000000000;
  profile.end_ns = profile.start_ns + samples * kPeriod / 16;
  return profile;
}

}  // namespace jitdump::report::testing
