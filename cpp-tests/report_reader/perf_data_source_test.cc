// jitdump report's perf.data path (perf_data_source.h) on recordings written byte by byte
// (cpp-tests/perfdata/perf_data_builder.h): what a sample's frames become in the Profile.
#include "jitdump/report/perf_data_source.h"

#include <gtest/gtest.h>

#include <string>

#include "cpp-tests/perfdata/perf_data_builder.h"
#include "cpp-tests/temp_dir_test.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::report {
namespace {

using perfdata::kContextUser;
using perfdata::kSampleCallchain;
using perfdata::kSampleIp;
using perfdata::kSamplePeriod;
using perfdata::kSampleTid;
using perfdata::kSampleTime;
using jitdump::perfdata::testing::IdFields;
using jitdump::perfdata::testing::PerfDataBuilder;
using jitdump::perfdata::testing::SampleFields;

class PerfDataSourceTest : public TempDirTest {
 protected:
  Profile Read(const PerfDataBuilder& b) {
    const std::vector<uint8_t> bytes = b.File();
    const std::string path = Write("perf.data", std::string(bytes.begin(), bytes.end()));
    std::string error;
    std::unique_ptr<PerfDataSource> source = PerfDataSource::Open(path, &error);
    EXPECT_TRUE(source) << error;
    if (!source) return {};
    source->set_symbolize(false);  // names after the DSO: what is tested is the frames' addresses
    source->ReadSideBand(processes_);
    ProfileReader reader(processes_, ReadOptions{});
    source->ReadSamples(reader, nullptr);
    return reader.Take();
  }
  ProcessMap processes_;
};

constexpr uint64_t kFields = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod | kSampleCallchain;

// perf record -g on a thread whose frame pointer chain is empty (the kernel gives the context
// marker and nothing else): the sample keeps the pc it was taken at.
TEST_F(PerfDataSourceTest, EmptyFramePointerChainKeepsThePc) {
  PerfDataBuilder b;
  b.AddEvent(kFields, {}, "cpu-clock");
  b.Comm(40, 40, "java", true, IdFields{40, 40, 1, 0});
  b.Mmap2(40, 0x400000, 0x10000, 0, "/usr/lib/jvm/java-17/bin/java", IdFields{40, 40, 2, 0});
  b.Mmap2(40, 0x7f0000000000, 0x100000, 0x2000, "/usr/lib/x86_64-linux-gnu/libc.so.6", IdFields{40, 40, 3, 0});
  SampleFields f;
  f.pid = f.tid = 40;
  f.time = 10;
  f.ip = 0x7f0000000123;
  f.callchain = {kContextUser};
  b.Sample(0, f);
  const Profile p = Read(b);
  ASSERT_EQ(p.samples.size(), 1u);
  ASSERT_EQ(p.samples[0].locations.size(), 1u);
  const Location& leaf = p.locations[p.samples[0].locations[0]];
  EXPECT_EQ(leaf.address, 0x2123u);  // the pc as an offset into libc, not 0
  EXPECT_EQ(p.mappings[leaf.mapping].file, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(p.functions[leaf.lines.at(0).function].name, "[libc.so.6]");
  EXPECT_NE(p.functions[leaf.lines.at(0).function].kind, FrameKind::kUnknown);
  // The process's program, for pprof's header.
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].executable, "/usr/lib/jvm/java-17/bin/java");
}

// A chain perf discards (an invalid context marker) also leaves the sample its pc.
TEST_F(PerfDataSourceTest, DiscardedChainKeepsThePc) {
  PerfDataBuilder b;
  b.AddEvent(kFields, {}, "cpu-clock");
  b.Mmap2(41, 0x7f0000000000, 0x100000, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6", IdFields{41, 41, 1, 0});
  SampleFields f;
  f.pid = f.tid = 41;
  f.time = 10;
  f.ip = 0x7f0000000456;
  f.callchain = {kContextUser, 0x7f0000000456, static_cast<uint64_t>(-1000), 0x7f0000000999};
  b.Sample(0, f);
  const Profile p = Read(b);
  ASSERT_EQ(p.samples.size(), 1u);
  ASSERT_EQ(p.samples[0].locations.size(), 1u);
  EXPECT_EQ(p.locations[p.samples[0].locations[0]].address, 0x456u);
}

}  // namespace
}  // namespace jitdump::report
