// Frame kinds: Java methods in every spelling the agent writes, HotSpot's stubs and adapters
// (whose names may hold parentheses), kernel frames and the DSOs JIT code hides behind.
#include "jitdump/report/classify.h"

#include <gtest/gtest.h>

namespace jitdump::report {
namespace {

TEST(Classify, JavaMethodSpellings) {
  for (const char* name : {
           "demo.Demo.leaf(long, int)",                      // names=java
           "java.util.HashMap.getNode(int, java.lang.Object)",
           "java.lang.Object.<init>()",
           "Demo.main(java.lang.String[])",                  // the default package
           "demo.Demo.lambda$main$0()",
           "java.lang.invoke.LambdaForm$MH/0x0000000800c0c000.invoke(java.lang.Object)",  // hidden class
           "Ljava/util/HashMap;getNode(ILjava/lang/Object;)Ljava/util/HashMap$Node;",       // names=jvm
           "java.util.HashMap.getNode",                      // names=simple, inline records
           "demo.Demo.inlinedCaller",
       }) {
    EXPECT_TRUE(LooksLikeJavaMethod(name)) << name;
    EXPECT_EQ(KindOfName(name), FrameKind::kCompiled) << name;
  }
}

TEST(Classify, StubsAndAdaptersAreNotJava) {
  // "I2C/C2I adapters(0xb)" holds a "(": 618 of 25,899 samples were once counted as Java.
  for (const char* name : {"I2C/C2I adapters(0xb)", "I2C/C2I adapters(0xabbebebe)", "StubRoutines (1)", "vtable stub",
                           "itable stub", "jlong_disjoint_arraycopy_avx3", "MethodHandles adapters", "SafepointBlob",
                           "flush_icache_stub", "call_stub", "I2C/C2I adapters", ""}) {
    EXPECT_FALSE(LooksLikeJavaMethod(name)) << name;
    EXPECT_EQ(KindOfName(name), FrameKind::kStub) << name;
  }
  EXPECT_EQ(KindOfName("Interpreter"), FrameKind::kInterpreted);
}

TEST(Classify, LoadKindTrustsLineInformation) {
  LoadBody load;
  load.name = "I2C/C2I adapters(0xb)";
  EXPECT_EQ(LoadKind(load), FrameKind::kStub);
  load.name = "java.lang.Object.hashCode()";  // a native-method wrapper: no lines, a Java name
  EXPECT_EQ(LoadKind(load), FrameKind::kCompiled);
  load.name = "some_lambda_proxy_without_a_dotted_name";
  load.debug_info = 3;  // the agent writes lines only for compiled methods
  EXPECT_EQ(LoadKind(load), FrameKind::kCompiled);
  load.name = "Interpreter";
  EXPECT_EQ(LoadKind(load), FrameKind::kInterpreted);
}

TEST(Classify, JavaFrameNameDropsTheSignature) {
  EXPECT_EQ(JavaFrameName("demo.Demo.leaf(long, int)"), "demo.Demo.leaf");
  EXPECT_EQ(JavaFrameName("Ljava/util/HashMap;getNode(ILjava/lang/Object;)Ljava/util/HashMap$Node;"),
            "java.util.HashMap.getNode");
  EXPECT_EQ(JavaFrameName("demo.Demo.leaf"), "demo.Demo.leaf");
  EXPECT_EQ(JavaFrameName("I2C/C2I adapters(0xb)"), "I2C/C2I adapters(0xb)");
}

TEST(Classify, KernelFrames) {
  EXPECT_TRUE(IsKernelFrame(0xffffffff8225f2d9, "[kernel.kallsyms]"));
  EXPECT_TRUE(IsKernelFrame(0xffffffff8225f2d9, ""));
  EXPECT_TRUE(IsKernelFrame(0x1234, "[ext4]"));
  EXPECT_FALSE(IsKernelFrame(0x7f0000001000, "[vdso]"));
  EXPECT_FALSE(IsKernelFrame(0x7f0000001000, "[unknown]"));
  EXPECT_FALSE(IsKernelFrame(0x7f0000001000, "/usr/lib/libc.so.6"));
}

TEST(Classify, JitCandidateDsos) {
  for (const char* dso : {"", "[unknown]", "/tmp/perf-1234.map", "//anon", "[anon:code]", "/memfd:jit (deleted)",
                          "[JIT] tid 77", "/run/jit/jitted-1234-56.so"}) {
    EXPECT_TRUE(IsJitCandidateDso(dso)) << dso;
  }
  for (const char* dso : {"/usr/lib/jvm/x/libjvm.so", "[kernel.kallsyms]", "/tmp/perf-x.mapping", "[vdso]"}) {
    EXPECT_FALSE(IsJitCandidateDso(dso)) << dso;
  }
  uint64_t index = 0;
  ASSERT_TRUE(JittedElfIndex("/run/jit/jitted-1234-56.so", &index));
  EXPECT_EQ(index, 56u);
  EXPECT_FALSE(JittedElfIndex("/run/jit/jitted-1234.so", &index));
}

}  // namespace
}  // namespace jitdump::report
