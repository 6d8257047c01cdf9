// A test fixture for driving the agent's callbacks through the fake JVM (fake_jvmti.h) with a
// fresh directory for its files: the JVM answers JVMTI only on threads it knows, as HotSpot does,
// and the test's own thread is one of them (it stands in for the threads HotSpot runs callbacks
// on: the Attach Listener, the ServiceThread). Plus the compiled load tests post most often and
// the names a dump ended up with.
#pragma once

#include <jvmti.h>
#include <jvmticmlr.h>

#include <cstddef>
#include <string>
#include <vector>

#include "agent/core/clock.h"
#include "agent/core/lifecycle.h"
#include "agent/jvmti/callbacks.h"
#include "fake_jvmti.h"
#include "temp_dir_test.h"
#include "test_dump_reader.h"

namespace test_support {

class FakeJvmTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    FakeJvmti::require_attached() = true;
    FakeJvm::SetJvmti(fake_.env());  // what GetEnv hands the agent
    FakeJvm::ActAsJvmThread();
  }
  void TearDown() override {
    FakeJvm::SetJvmti(nullptr);
    TempDirTest::TearDown();
  }

  // A compiled load of `method` as HotSpot posts it: `size` bytes of code at `code`, with one
  // PcDesc at `pc` naming the method itself at bci 0.
  static void PostCompiledLoad(jitdump_agent::Lifecycle& lifecycle, FakeMethod& method, const void* code, size_t size,
                               const void* pc) {
    jmethodID methods[1] = {method.id()};
    jint bcis[1] = {0};
    PCStackInfo desc{const_cast<void*>(pc), 1, methods, bcis};
    jvmtiCompiledMethodLoadInlineRecord record{};
    record.header.kind = JVMTI_CMLR_INLINE_INFO;
    record.numpcs = 1;
    record.pcinfo = &desc;
    jitdump_agent::HandleCompiledMethodLoad(lifecycle, jitdump_agent::MonotonicNanos(), method.id(),
                                            static_cast<jint>(size), code, &record);
  }

  // The names of the CODE_LOAD records in `dump`, in file order.
  static std::vector<std::string> LoadNames(const std::string& dump) {
    std::vector<std::string> names;
    for (const TestRecord& r : WalkRecords(ReadFileBytes(dump))) {
      if (r.id == 0) names.push_back(r.name);
    }
    return names;
  }

  FakeJvmti fake_;
  FakeJvm jvm_;
  FakeClass class_{"Lapp/Work;", "Work.java"};  // the class of the methods a test compiles
};

}  // namespace test_support
