// The perf.data reader on files written byte by byte from the format's layouts: every SAMPLE
// field, the side-band records and their sample_id trailers, several events told apart by id,
// time order across FINISHED_ROUNDs, the zstd stream of COMPRESSED records, the other byte
// order, the stream format through a real pipe, the feature sections; and damaged input (cut at
// every byte, a record of size 0, counts that point outside the file): everything before the
// damage, one warning with its offset, never a crash.
#include "jitdump/perfdata/reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "cpp-tests/perfdata/perf_data_builder.h"

namespace jitdump::perfdata {
namespace {

using testing::Bytes;
using testing::IdFields;
using testing::PerfDataBuilder;
using testing::SampleFields;

class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    char pattern[] = "/tmp/perfdata-test.XXXXXX";
    const int fd = mkstemp(pattern);
    path_ = pattern;
    if (!bytes.empty()) {
      EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    }
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Everything a pass hands out, copied.
struct Seen {
  uint32_t type = 0;
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t ip = 0;
  size_t event = 0;
  std::string text;  // file name / comm
  std::vector<uint64_t> chain;
};

class Collector : public RecordSink {
 public:
  std::vector<Seen> seen;
  std::vector<Sample> samples;  // valid only inside OnSample; kept for field checks via copies below
  std::vector<std::vector<uint64_t>> regs, read_values, branch_words;
  std::vector<std::vector<uint8_t>> stacks, raws, auxes;
  std::vector<Mmap> mmaps;
  std::vector<std::string> mmap_names, build_ids;

  void OnSample(const Sample& s) override {
    Seen x{kRecordSample, s.time, s.pid, s.tid, s.ip, s.event, "", {}};
    for (size_t i = 0; i < s.callchain.size(); ++i) x.chain.push_back(s.callchain[i]);
    seen.push_back(x);
    samples.push_back(s);
    std::vector<uint64_t> r;
    for (size_t i = 0; i < s.regs_user.values.size(); ++i) r.push_back(s.regs_user.values[i]);
    regs.push_back(r);
    std::vector<uint64_t> v;
    for (size_t i = 0; i < s.read.values.size(); ++i) v.push_back(s.read.values[i]);
    read_values.push_back(v);
    std::vector<uint64_t> w;
    for (size_t i = 0; i < s.branch_stack.words.size(); ++i) w.push_back(s.branch_stack.words[i]);
    branch_words.push_back(w);
    const auto valid = s.stack_user.valid();
    stacks.emplace_back(valid.begin(), valid.end());
    raws.emplace_back(s.raw.begin(), s.raw.end());
    auxes.emplace_back(s.aux.begin(), s.aux.end());
  }
  void OnMmap(const Mmap& m) override {
    seen.push_back(Seen{m.mmap2 ? kRecordMmap2 : kRecordMmap, m.sample_id.time, m.pid, m.tid, m.start, 0,
                        std::string(m.filename), {}});
    mmaps.push_back(m);
    mmap_names.emplace_back(m.filename);
    build_ids.emplace_back(m.build_id.begin(), m.build_id.end());
  }
  void OnComm(const Comm& c) override {
    seen.push_back(Seen{kRecordComm, c.sample_id.time, c.pid, c.tid, c.exec, 0, std::string(c.comm), {}});
  }
  void OnTask(const Task& t) override {
    seen.push_back(Seen{t.fork ? kRecordFork : kRecordExit, t.sample_id.time, t.pid, t.tid, t.ppid, 0, "", {}});
  }
  void OnLost(const Lost& l) override { seen.push_back(Seen{kRecordLost, l.sample_id.time, 0, 0, l.lost, 0, "", {}}); }

  std::vector<uint64_t> Times() const {
    std::vector<uint64_t> t;
    for (const Seen& s : seen) t.push_back(s.time);
    return t;
  }
};

struct Result {
  std::unique_ptr<PerfDataReader> reader;
  Collector records;
  std::string error;
};

std::unique_ptr<Result> ReadAll(const std::vector<uint8_t>& bytes, ReadOptions options = {}) {
  TempFile file(bytes);
  auto r = std::make_unique<Result>();
  r->reader = PerfDataReader::Open(file.path(), &r->error);
  if (r->reader) r->reader->Read(r->records, options);
  return r;
}

constexpr uint64_t kCommon = kSampleIp | kSampleTid | kSampleTime | kSamplePeriod;

bool Contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(PerfDataReader, ReadsEveryFieldOfASample) {
  PerfDataBuilder b;
  const uint64_t all = kSampleIdentifier | kSampleIp | kSampleTid | kSampleTime | kSampleAddr | kSampleRead |
                       kSampleCallchain | kSampleId | kSampleCpu | kSamplePeriod | kSampleStreamId | kSampleRaw |
                       kSampleBranchStack | kSampleRegsUser | kSampleStackUser | kSampleWeightStruct |
                       kSampleDataSrc | kSampleTransaction | kSampleRegsIntr | kSamplePhysAddr | kSampleAux |
                       kSampleCgroup | kSampleDataPageSize | kSampleCodePageSize;
  const uint64_t format = kFormatGroup | kFormatId | kFormatTotalTimeEnabled | kFormatTotalTimeRunning | kFormatLost;
  b.AddEvent(all, {77}, "cycles", format, /*regs_user=*/0b1100001, kTypeHardware, 0, true, kBranchHwIndex,
             /*regs_intr=*/0b11);
  SampleFields f;
  f.ip = 0x401000;
  f.pid = 10;
  f.tid = 11;
  f.time = 5000;
  f.addr = 0xdead;
  f.stream_id = 9;
  f.cpu = 3;
  f.period = 250000;
  f.read = {2, 100, 90, 7, 77, 1, 8, 78, 0};  // nr, enabled, running, {value, id, lost} x 2
  f.callchain = {kContextKernel, 0xffffffff81000000, kContextUser, 0x401000, 0x402000};
  f.raw = {1, 2, 3, 4};  // u32 size + 4 bytes: 8, as the kernel pads it
  f.branches = {0x10, 0x20, 1, 0x30, 0x40, 2};
  f.hw_index = 5;
  f.regs_user = {0x1000, 0x2000, 0x3000};
  f.stack = std::vector<uint8_t>(32, 0xAB);
  f.stack_dyn_size = 24;
  f.weight = (uint64_t{3} << 48) | (uint64_t{2} << 32) | 1;
  f.data_src = 0x42;
  f.transaction = 6;
  f.regs_intr = {0x11, 0x22};
  f.phys_addr = 0x1234;
  f.cgroup = 99;
  f.data_page_size = 4096;
  f.code_page_size = 2097152;
  f.aux = std::vector<uint8_t>(16, 0xCD);
  b.Sample(0, f);
  const auto r = ReadAll(b.File());
  ASSERT_TRUE(r->reader) << r->error;
  ASSERT_EQ(r->records.samples.size(), 1u);
  const Sample& s = r->records.samples[0];
  EXPECT_EQ(s.identifier, 77u);
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.tid, 11u);
  EXPECT_EQ(s.time, 5000u);
  EXPECT_EQ(s.addr, 0xdeadu);
  EXPECT_EQ(s.id, 77u);
  EXPECT_EQ(s.stream_id, 9u);
  EXPECT_EQ(s.cpu, 3u);
  EXPECT_EQ(s.period, 250000u);
  EXPECT_TRUE(s.read.group);
  EXPECT_EQ(s.read.time_enabled, 100u);
  EXPECT_EQ(s.read.time_running, 90u);
  EXPECT_EQ(s.read.stride, 3u);
  EXPECT_EQ(r->records.read_values[0], (std::vector<uint64_t>{7, 77, 1, 8, 78, 0}));
  EXPECT_EQ(r->records.seen[0].chain, f.callchain);
  EXPECT_EQ(r->records.raws[0], (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(s.branch_stack.nr, 2u);
  EXPECT_TRUE(s.branch_stack.has_hw_index);
  EXPECT_EQ(s.branch_stack.hw_index, 5u);
  EXPECT_EQ(r->records.branch_words[0], f.branches);
  EXPECT_EQ(s.regs_user.abi, 2u);
  EXPECT_EQ(r->records.regs[0], f.regs_user);
  uint64_t value = 0;
  EXPECT_TRUE(s.regs_user.Get(5, &value));
  EXPECT_EQ(value, 0x2000u);  // mask 0b1100001: bit 0, 5, 6
  EXPECT_FALSE(s.regs_user.Get(1, &value));
  EXPECT_EQ(r->records.stacks[0], std::vector<uint8_t>(24, 0xAB));
  EXPECT_EQ(s.stack_user.data.size(), 32u);
  EXPECT_EQ(s.weight_var1, 1u);
  EXPECT_EQ(s.weight_var2, 2u);
  EXPECT_EQ(s.weight_var3, 3u);
  EXPECT_EQ(s.data_src, 0x42u);
  EXPECT_EQ(s.transaction, 6u);
  EXPECT_EQ(s.regs_intr.values.size(), 2u);
  EXPECT_EQ(s.phys_addr, 0x1234u);
  EXPECT_EQ(s.cgroup, 99u);
  EXPECT_EQ(s.data_page_size, 4096u);
  EXPECT_EQ(s.code_page_size, 2097152u);
  EXPECT_EQ(r->records.auxes[0], std::vector<uint8_t>(16, 0xCD));
  EXPECT_EQ(r->reader->recording().events[0].name, "cycles");
  EXPECT_TRUE(r->reader->warnings().empty());
}

TEST(PerfDataReader, SingleReadValueAndPlainWeight) {
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleRead | kSampleWeight, {}, "", kFormatId | kFormatLost | kFormatTotalTimeEnabled);
  SampleFields f;
  f.time = 1;
  f.read = {1234, 50, 9, 2};  // value, enabled, id, lost
  f.weight = 77;
  b.Sample(0, f);
  const auto r = ReadAll(b.File());
  ASSERT_EQ(r->records.samples.size(), 1u);
  const Sample& s = r->records.samples[0];
  EXPECT_FALSE(s.read.group);
  EXPECT_EQ(s.read.value, 1234u);
  EXPECT_EQ(s.read.time_enabled, 50u);
  EXPECT_EQ(s.read.id, 9u);
  EXPECT_EQ(s.read.lost, 2u);
  EXPECT_EQ(s.weight, 77u);
}

TEST(PerfDataReader, SideBandRecordsAndTheirTrailers) {
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleCpu | kSampleIdentifier, {5}, "cpu-clock");
  b.Raw(b.Mmap2Record(100, 0x7f0000000000, 0x2000, 0x1000, "/usr/lib/libc.so.6", IdFields{100, 101, 10, 2}));
  b.Raw(b.Mmap2Record(100, 0x7f1000000000, 0x1000, 0, "/usr/lib/libm.so.6", IdFields{100, 100, 11, 2}, 5,
                      kCpumodeUser, {0xde, 0xad, 0xbe, 0xef}));
  b.Mmap(0xffffffff, 0xffffffff81000000, 0x1000000, 0xffffffff81000000, "[kernel.kallsyms]_text", IdFields{0, 0, 0, 0},
         kCpumodeKernel);
  b.Comm(100, 100, "java", true, IdFields{100, 100, 12, 0});
  b.Task(true, 200, 100, 200, 100, IdFields{200, 200, 13, 0});
  b.Task(false, 200, 100, 200, 100, IdFields{200, 200, 14, 0});
  b.Lost(42, IdFields{0, 0, 15, 0});
  const auto r = ReadAll(b.File());
  ASSERT_TRUE(r->reader) << r->error;
  const auto& seen = r->records.seen;
  ASSERT_EQ(seen.size(), 7u);
  // The kernel's synthesized mmap has time 0: first.
  EXPECT_EQ(seen[0].type, kRecordMmap);
  EXPECT_EQ(seen[0].text, "[kernel.kallsyms]_text");
  EXPECT_EQ(seen[1].text, "/usr/lib/libc.so.6");
  EXPECT_EQ(r->records.mmaps[0].cpumode(), kCpumodeKernel);
  const Mmap& libc = r->records.mmaps[1];
  EXPECT_EQ(libc.start, 0x7f0000000000u);
  EXPECT_EQ(libc.len, 0x2000u);
  EXPECT_EQ(libc.pgoff, 0x1000u);
  EXPECT_EQ(libc.maj, 8u);
  EXPECT_EQ(libc.ino, 1234u);
  EXPECT_EQ(libc.prot, 5u);
  EXPECT_EQ(libc.sample_id.tid, 101u);
  EXPECT_EQ(libc.sample_id.cpu, 2u);
  EXPECT_EQ(r->records.build_ids[2], std::string("\xde\xad\xbe\xef"));
  EXPECT_EQ(seen[3].type, kRecordComm);
  EXPECT_EQ(seen[3].text, "java");
  EXPECT_EQ(seen[3].ip, 1u);  // exec
  EXPECT_EQ(seen[4].type, kRecordFork);
  EXPECT_EQ(seen[4].ip, 100u);  // ppid
  EXPECT_EQ(seen[5].type, kRecordExit);
  EXPECT_EQ(seen[6].type, kRecordLost);
  EXPECT_EQ(seen[6].ip, 42u);
  EXPECT_EQ(r->reader->stats().lost, 42u);
}

TEST(PerfDataReader, OrdersRecordsByTimeAcrossRounds) {
  PerfDataBuilder b;
  b.AddEvent(kCommon);
  auto sample = [&](uint64_t time, uint64_t ip) {
    SampleFields f;
    f.time = time;
    f.ip = ip;
    b.Sample(0, f);
  };
  // Two CPUs' buffers, written in turn: each round is ordered per CPU only.
  sample(3, 1);
  sample(4, 2);
  sample(1, 3);
  sample(2, 4);
  b.FinishedRound();
  sample(6, 5);
  sample(5, 6);
  sample(5, 7);  // equal times keep their order in the file
  b.FinishedRound();
  sample(7, 8);
  const auto r = ReadAll(b.File());
  EXPECT_EQ(r->records.Times(), (std::vector<uint64_t>{1, 2, 3, 4, 5, 5, 6, 7}));
  EXPECT_EQ(r->records.seen[4].ip, 6u);
  EXPECT_EQ(r->records.seen[5].ip, 7u);
  EXPECT_EQ(r->reader->stats().rounds, 2u);
  EXPECT_TRUE(r->reader->warnings().empty());
}

TEST(PerfDataReader, BoundedWithoutRounds) {
  // No FINISHED_ROUND at all and times in reverse: the sort budget makes the oldest half go out
  // early (counted, warned), so memory stays bounded; every record still comes out once.
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleCallchain);
  SampleFields f;
  f.callchain = std::vector<uint64_t>(100, 0x1000);
  for (uint64_t t = 2000; t > 0; --t) {
    f.time = t;
    b.Sample(0, f);
  }
  ReadOptions options;
  options.sort_budget = 64 * 1024;
  const auto r = ReadAll(b.File(), options);
  EXPECT_EQ(r->records.seen.size(), 2000u);
  EXPECT_GT(r->reader->stats().sort_overflows, 0u);
  EXPECT_TRUE(Contains(r->reader->warnings(), "exceeded"));
}

TEST(PerfDataReader, EventsToldApartByIdentifierAndById) {
  for (const bool identifier : {true, false}) {
    SCOPED_TRACE(identifier ? "IDENTIFIER" : "ID");
    PerfDataBuilder b;
    const uint64_t with = identifier ? kSampleIdentifier : kSampleId;
    b.AddEvent(kCommon | with | (identifier ? uint64_t{kSampleCallchain} : uint64_t{0}), {11, 12}, "cpu-clock");
    b.AddEvent(kCommon | with, {21, 22}, "task-clock", 0, 0, kTypeSoftware, kSwTaskClock);
    SampleFields f;
    f.time = 1;
    f.callchain = {0x10};
    b.Sample(0, f);
    f.time = 2;
    b.Sample(1, f);
    // A sample whose id no event has: skipped, as perf does.
    std::vector<uint8_t> stray = b.SampleRecord(1, f);
    const size_t id_at = 8 + (identifier ? 0 : 8 * 3);  // after IP, TID, TIME
    stray[id_at] = 99;
    b.Raw(stray);
    b.Comm(1, 1, "x", false, IdFields{1, 1, 3, 0});
    const auto r = ReadAll(b.File());
    ASSERT_TRUE(r->reader) << r->error;
    ASSERT_EQ(r->records.samples.size(), 2u);
    EXPECT_EQ(r->records.samples[0].event, 0u);
    EXPECT_EQ(r->records.samples[1].event, 1u);
    EXPECT_EQ(r->records.seen[0].chain.size(), identifier ? 1u : 0u);  // each with its own sample_type
    EXPECT_EQ(r->reader->recording().events[1].name, "task-clock");
    EXPECT_EQ(r->reader->stats().unknown_id, 1u);
    EXPECT_TRUE(Contains(r->reader->warnings(), "no recorded event"));
    EXPECT_EQ(r->records.seen.back().text, "x");
  }
}

TEST(PerfDataReader, DefaultEventNames) {
  EventAttr a;
  a.type = kTypeSoftware;
  a.config = kSwCpuClock;
  EXPECT_EQ(DefaultEventName(a), "cpu-clock");
  a.type = kTypeHardware;
  a.config = 1;
  a.flags = 1ull << 5;  // exclude_kernel
  EXPECT_EQ(DefaultEventName(a), "instructions:u");
  a.type = 42;
  a.flags = 0;
  EXPECT_EQ(DefaultEventName(a), "2a:1");
}

PerfDataBuilder Mixed(bool big_endian = false) {
  PerfDataBuilder b(big_endian);
  b.AddEvent(kCommon | kSampleCallchain, {}, "cpu-clock");
  b.Comm(7, 7, "java", false, IdFields{7, 7, 1, 0});
  b.Mmap2(7, 0x400000, 0x1000, 0, "/bin/java", IdFields{7, 7, 2, 0});
  for (uint64_t t = 3; t < 60; ++t) {
    SampleFields f;
    f.pid = f.tid = 7;
    f.time = t;
    f.ip = 0x400000 + t;
    f.callchain = {0x400000 + t, 0x400100, 0x400200};
    b.Sample(0, f);
    if (t % 10 == 0) b.FinishedRound();
  }
  b.Task(false, 7, 1, 7, 1, IdFields{7, 7, 61, 0});
  return b;
}

TEST(PerfDataReader, CompressedRecordsThroughOneStream) {
  const auto plain = ReadAll(Mixed().File());
  ASSERT_EQ(plain->records.seen.size(), 60u);
  for (const bool v2 : {false, true}) {
    SCOPED_TRACE(v2 ? "COMPRESSED2" : "COMPRESSED");
    PerfDataBuilder b = Mixed();
    // 40-byte pieces: records straddle COMPRESSED records, as perf's do.
    b.CompressFrom(0, v2, 40);
    const auto r = ReadAll(b.File());
    ASSERT_TRUE(r->reader) << r->error;
    EXPECT_GT(r->reader->stats().compressed, 5u);
    EXPECT_EQ(r->records.Times(), plain->records.Times());
    EXPECT_EQ(r->records.seen.back().type, static_cast<uint32_t>(kRecordExit));
    EXPECT_TRUE(r->reader->warnings().empty()) << r->reader->warnings()[0];
    EXPECT_TRUE(r->reader->recording().features.compression.has_value());
  }
}

TEST(PerfDataReader, DamagedCompressedData) {
  PerfDataBuilder b = Mixed();
  b.CompressFrom(0, false, 90);
  std::vector<uint8_t> file = b.File();
  // Flip bytes in the middle of the zstd stream.
  const size_t data = PerfDataBuilder::kHeaderSize + PerfDataBuilder::kAttrSize + 16;
  for (size_t i = data + 400; i < data + 420; ++i) file[i] ^= 0x5A;
  const auto r = ReadAll(file);
  ASSERT_TRUE(r->reader);
  EXPECT_TRUE(r->reader->stats().truncated);
  EXPECT_TRUE(Contains(r->reader->warnings(), "compressed"));
  EXPECT_LT(r->records.seen.size(), 60u);
}

TEST(PerfDataReader, OtherByteOrder) {
  const auto little = ReadAll(Mixed().File());
  const auto big = ReadAll(Mixed(true).File());
  ASSERT_TRUE(big->reader) << big->error;
  EXPECT_TRUE(big->reader->recording().swap);
  EXPECT_TRUE(big->reader->recording().events[0].attr.sample_id_all());
  EXPECT_TRUE(big->reader->recording().events[0].attr.use_clockid());
  EXPECT_EQ(big->reader->recording().events[0].attr.clockid, 1);
  ASSERT_EQ(big->records.seen.size(), little->records.seen.size());
  for (size_t i = 0; i < big->records.seen.size(); ++i) {
    EXPECT_EQ(big->records.seen[i].time, little->records.seen[i].time);
    EXPECT_EQ(big->records.seen[i].ip, little->records.seen[i].ip);
    EXPECT_EQ(big->records.seen[i].chain, little->records.seen[i].chain);
    EXPECT_EQ(big->records.seen[i].text, little->records.seen[i].text);
  }
}

TEST(PerfDataReader, StreamFormatThroughAPipe) {
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleId | kSampleCallchain, {31}, "cpu-clock");
  b.AddEvent(kCommon | kSampleId | kSampleCallchain, {32}, "dummy:u", 0, 0, kTypeSoftware, 9);
  b.SetString(kFeatHostname, "host-a");
  b.SetString(kFeatVersion, "6.1.99");
  const size_t first = b.records().size();
  for (uint64_t t = 1; t < 200; ++t) {
    SampleFields f;
    f.time = t;
    f.callchain = std::vector<uint64_t>(50, t);
    b.Sample(0, f);
  }
  b.CompressFrom(first, false, 1000);
  const std::vector<uint8_t> bytes = b.Pipe();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fds[1], bytes.data() + done, std::min<size_t>(4096, bytes.size() - done));
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  std::string error;
  auto reader = PerfDataReader::FromFd(fds[0], "pipe", &error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->recording().pipe);
  EXPECT_FALSE(reader->rereadable());
  Collector c;
  EXPECT_TRUE(reader->Read(c));
  writer.join();
  close(fds[0]);
  EXPECT_EQ(c.seen.size(), 199u);
  ASSERT_EQ(reader->recording().events.size(), 2u);
  EXPECT_EQ(reader->recording().events[0].name, "cpu-clock");  // from EVENT_UPDATE
  EXPECT_EQ(reader->recording().events[1].name, "dummy:u");
  EXPECT_EQ(reader->recording().features.hostname, "host-a");
  EXPECT_EQ(reader->recording().features.version, "6.1.99");
  EXPECT_FALSE(reader->Read(c));  // a stream is read once
}

TEST(PerfDataReader, StreamFormatSavedToAFileReadsTwice) {
  PerfDataBuilder b = Mixed();
  const auto r = ReadAll(b.Pipe());
  ASSERT_TRUE(r->reader) << r->error;
  EXPECT_TRUE(r->reader->rereadable());
  EXPECT_EQ(r->records.seen.size(), 60u);
  Collector again;
  EXPECT_TRUE(r->reader->Read(again));
  EXPECT_EQ(again.seen.size(), 60u);
}

TEST(PerfDataReader, Features) {
  PerfDataBuilder b;
  b.AddEvent(kCommon, {}, "cpu-clock");
  b.Sample(0, SampleFields{});
  b.SetString(kFeatHostname, "box");
  b.SetString(kFeatOsRelease, "6.1.0-18-amd64");
  b.SetString(kFeatVersion, "6.1.76");
  b.SetString(kFeatArch, "x86_64");
  Bytes cmd;
  cmd.U32(3).HeaderString("perf").HeaderString("record").HeaderString("-g");
  b.SetFeature(kFeatCmdline, cmd.data);
  Bytes clock;
  clock.U64(1);
  b.SetFeature(kFeatClockId, clock.data);
  Bytes clock_data;
  clock_data.U32(1).U32(1).U64(1700000000000000000ull).U64(123456789);
  b.SetFeature(kFeatClockData, clock_data.data);
  Bytes times;
  times.U64(10).U64(20);
  b.SetFeature(kFeatSampleTime, times.data);
  Bytes ids;
  for (const auto& [pid, misc, name] : {std::tuple{-1, kCpumodeKernel, "[kernel.kallsyms]"},
                                        std::tuple{7, kCpumodeUser, "/usr/lib/libc.so.6"}}) {
    Bytes entry;
    entry.U32(static_cast<uint32_t>(pid));
    for (int i = 0; i < 20; ++i) entry.U8(static_cast<uint8_t>(i + (pid > 0 ? 100 : 0)));
    entry.U8(20).U8(0).U16(0).PaddedString(name);
    ids.U32(kRecordHeaderBuildId).U16(static_cast<uint16_t>(misc | kMiscBuildIdSize)).U16(
        static_cast<uint16_t>(8 + entry.size()));
    ids.Raw(entry.data);
  }
  b.SetFeature(kFeatBuildId, ids.data);
  const auto r = ReadAll(b.File());
  ASSERT_TRUE(r->reader) << r->error;
  const Features& f = r->reader->recording().features;
  EXPECT_EQ(f.hostname, "box");
  EXPECT_EQ(f.os_release, "6.1.0-18-amd64");
  EXPECT_EQ(f.version, "6.1.76");
  EXPECT_EQ(f.arch, "x86_64");
  EXPECT_EQ(f.cmdline, (std::vector<std::string>{"perf", "record", "-g"}));
  EXPECT_EQ(f.clock_resolution_ns, 1u);
  ASSERT_TRUE(f.clock_data);
  EXPECT_EQ(f.clock_data->clockid, 1u);
  EXPECT_EQ(f.clock_data->clockid_time_ns, 123456789u);
  EXPECT_EQ(f.first_sample_time, 10u);
  EXPECT_EQ(f.last_sample_time, 20u);
  ASSERT_EQ(f.build_ids.size(), 2u);
  EXPECT_EQ(f.build_ids[0].filename, "[kernel.kallsyms]");
  EXPECT_EQ(f.build_ids[0].cpumode, kCpumodeKernel);
  EXPECT_EQ(f.build_ids[1].filename, "/usr/lib/libc.so.6");
  EXPECT_EQ(f.build_ids[1].id.size(), 20u);
  EXPECT_EQ(f.build_ids[1].id[0], 100);
  EXPECT_TRUE(f.present.test(kFeatHostname));
}

TEST(PerfDataReader, CutAtEveryByte) {
  // Whatever length the file is cut to: no crash; either Open refuses it with a message, or the
  // records wholly inside the cut come out, the damage is one warning naming an offset, and no
  // record comes out twice or altered.
  PerfDataBuilder b = Mixed();
  const std::vector<uint8_t> whole = b.File();
  const auto full = ReadAll(whole);
  const size_t data_begin = PerfDataBuilder::kHeaderSize + PerfDataBuilder::kAttrSize + 16;
  std::vector<size_t> ends;  // where each record ends
  size_t at = data_begin;
  for (const auto& rec : b.records()) ends.push_back(at += rec.size());
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    SCOPED_TRACE(cut);
    const auto r = ReadAll(std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut)));
    if (!r->reader) {
      EXPECT_FALSE(r->error.empty());
      EXPECT_LE(cut, data_begin);
      continue;
    }
    size_t whole_records = 0;
    for (size_t end : ends) whole_records += end <= cut;
    size_t rounds = 0;
    for (size_t i = 0; i < whole_records; ++i) rounds += b.records()[i].size() == 8;
    EXPECT_EQ(r->records.seen.size(), whole_records - rounds);
    for (size_t i = 0; i < r->records.seen.size(); ++i) EXPECT_EQ(r->records.seen[i].time, full->records.seen[i].time);
    if (cut < ends.back()) {
      EXPECT_TRUE(Contains(r->reader->warnings(), "truncated"));
    }
  }
}

TEST(PerfDataReader, DamagedRecordStopsThereWithItsOffset) {
  PerfDataBuilder b = Mixed();
  std::vector<uint8_t> file = b.File();
  const size_t data_begin = PerfDataBuilder::kHeaderSize + PerfDataBuilder::kAttrSize + 16;
  size_t offset = data_begin;
  for (size_t i = 0; i < 12; ++i) offset += b.records()[i].size();
  file[offset + 6] = 0;  // header.size 0
  file[offset + 7] = 0;
  const auto r = ReadAll(file);
  ASSERT_TRUE(r->reader);
  EXPECT_TRUE(r->reader->stats().truncated);
  EXPECT_TRUE(Contains(r->reader->warnings(), "damaged record at offset " + std::to_string(offset)));
  EXPECT_EQ(r->records.seen.size(), 11u);  // 12 records before it, one of them a round
}

TEST(PerfDataReader, DataSizeZeroReadsToTheEnd) {
  // perf record killed before it could write the header's data size.
  const auto r = ReadAll(Mixed().File(/*zero_data_size=*/true));
  ASSERT_TRUE(r->reader) << r->error;
  EXPECT_TRUE(Contains(r->reader->warnings(), "data size is 0"));
  EXPECT_GE(r->records.seen.size(), 60u);  // the feature section after the data reads as damage at worst
}

TEST(PerfDataReader, FieldsOutsideTheirRecordAreSkipped) {
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleCallchain);
  SampleFields f;
  f.time = 1;
  f.callchain = {1, 2, 3};
  std::vector<uint8_t> bad = b.SampleRecord(0, f);
  bad[8 + 8 * 4] = 0xff;  // callchain nr: 255 + ..., far more than the record holds
  bad[8 + 8 * 4 + 7] = 0x7f;
  b.Raw(bad);
  f.time = 2;
  b.Sample(0, f);
  const auto r = ReadAll(b.File());
  EXPECT_EQ(r->records.seen.size(), 1u);
  EXPECT_EQ(r->reader->stats().bad_records, 1u);
  EXPECT_TRUE(Contains(r->reader->warnings(), "does not hold the fields"));
}

TEST(PerfDataReader, AuxtracePayloadIsSkipped) {
  PerfDataBuilder b;
  b.AddEvent(kCommon);
  SampleFields f;
  f.time = 1;
  b.Sample(0, f);
  Bytes aux;
  aux.U64(24).U64(0).U64(0).U32(0).U32(0).U32(0).U32(0);
  std::vector<uint8_t> record = b.Wrap(kRecordAuxtrace, 0, aux.data);
  record.resize(record.size() + 24, 0xEE);  // the AUX data, outside header.size
  b.Raw(record);
  f.time = 2;
  b.Sample(0, f);
  const auto r = ReadAll(b.File());
  EXPECT_EQ(r->records.Times(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(r->reader->warnings().empty());
}

TEST(PerfDataReader, HostileHeaders) {
  {
    std::vector<uint8_t> file = Mixed().File();
    file[16] = 8;  // attr_size 8
    EXPECT_FALSE(ReadAll(file)->reader);
  }
  {
    std::vector<uint8_t> file = Mixed().File();
    file[24 + 15] = 0x7f;  // attrs.size enormous
    const auto r = ReadAll(file);
    EXPECT_FALSE(r->reader);
    EXPECT_NE(r->error.find("event list"), std::string::npos);
  }
  {
    std::vector<uint8_t> file = Mixed().File();
    file[40 + 7] = 0x7f;  // data.offset far outside the file
    EXPECT_FALSE(ReadAll(file)->reader);
  }
  {
    const auto r = ReadAll(std::vector<uint8_t>{'P', 'E', 'R', 'F', 'F', 'I', 'L', 'E', 0, 0, 0, 0, 0, 0, 0, 0});
    EXPECT_FALSE(r->reader);
    EXPECT_NE(r->error.find("version 1"), std::string::npos);
  }
  {
    const auto r = ReadAll(std::vector<uint8_t>(200, 'x'));
    EXPECT_FALSE(r->reader);
  }
  {
    // A feature section claiming gigabytes: skipped with a warning, the records still read.
    PerfDataBuilder b = Mixed();
    b.SetString(kFeatHostname, "h");
    std::vector<uint8_t> file = b.File();
    const size_t table = PerfDataBuilder::kHeaderSize + PerfDataBuilder::kAttrSize + 16 + b.Data().size();
    file[table + 8 + 7] = 0x40;  // HOSTNAME's size (the first set bit's entry)
    const auto r = ReadAll(file);
    ASSERT_TRUE(r->reader);
    EXPECT_EQ(r->records.seen.size(), 60u);
    EXPECT_TRUE(Contains(r->reader->warnings(), "feature section 3"));
    EXPECT_TRUE(r->reader->recording().features.hostname.empty());
    EXPECT_EQ(r->reader->recording().events[0].name, "cpu-clock");  // EVENT_DESC still read
  }
}

TEST(PerfDataReader, EveryAttrSize) {
  // perf's first attr (64 bytes: no sample_regs_user, clockid, ...) and a future, longer one.
  for (const uint32_t size : {64u, 72u, 96u, 120u, 136u, 200u}) {
    SCOPED_TRACE(size);
    PerfDataBuilder b = Mixed();
    b.SetAttrSize(size);
    const auto r = ReadAll(b.File());
    ASSERT_TRUE(r->reader) << r->error;
    EXPECT_EQ(r->records.seen.size(), 60u);
    EXPECT_EQ(r->reader->recording().events[0].name, "cpu-clock");
    EXPECT_EQ(r->reader->recording().events[0].attr.clockid, size >= 96 ? 1 : 0);
  }
}

TEST(PerfDataReader, SampleTypeBitsOfANewerKernel) {
  PerfDataBuilder b;
  b.AddEvent(kCommon | kSampleCallchain | (uint64_t{1} << 30));
  SampleFields f;
  f.time = 7;
  f.ip = 0x1234;
  f.callchain = {0x1234, 0x5678};
  std::vector<uint8_t> record = b.SampleRecord(0, f);
  // The unknown field's word, where a newer kernel would put it (after the known fields).
  record.insert(record.end(), 8, 0xAA);
  record[6] = static_cast<uint8_t>(record.size());
  b.Raw(record);
  const auto r = ReadAll(b.File());
  ASSERT_EQ(r->records.seen.size(), 1u);
  EXPECT_EQ(r->records.seen[0].ip, 0x1234u);
  EXPECT_EQ(r->records.seen[0].chain, (std::vector<uint64_t>{0x1234, 0x5678}));
  EXPECT_TRUE(Contains(r->reader->warnings(), "does not know"));
}

TEST(PerfDataReader, SkipsSamplesWhenAsked) {
  ReadOptions options;
  options.samples = false;
  const auto r = ReadAll(Mixed().File(), options);
  EXPECT_EQ(r->records.seen.size(), 3u);  // comm, mmap, exit
  EXPECT_EQ(r->reader->stats().samples_skipped, 57u);
}

}  // namespace
}  // namespace jitdump::perfdata
