// libFuzzer target: the perf.data reader (jitdump/perfdata/) and what the report builds on it,
// on any bytes as a recording (file or stream format, compressed or not): the header, events
// and features, every record in time order, the address spaces the side-band records build,
// and DWARF unwinding of the samples' user stacks (jitdump/unwind/). Besides no crash / leak /
// UB / hang, checks the reader's promises: it reads the same records twice, never hands out
// more samples than records, keeps its warnings bounded, and reports damage as `truncated`.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/reader.h"
#include "jitdump/unwind/dwarf_unwinder.h"

namespace {

namespace pd = jitdump::perfdata;

[[noreturn]] void Fail(const char* what, uint64_t a, uint64_t b) {
  std::fprintf(stderr, "perfdata_fuzzer: %s (%llu, %llu)\n", what, static_cast<unsigned long long>(a),
               static_cast<unsigned long long>(b));
  std::abort();
}

// Feeds the address spaces and the unwinder, and touches every field handed out.
class Sink : public pd::RecordSink {
 public:
  explicit Sink(const pd::Recording& recording) : unwinder_(spaces_, recording) {
    spaces_.SetBuildIds(recording.features.build_ids);
  }
  uint64_t samples = 0, side_band = 0, checksum = 0;

  void OnSample(const pd::Sample& s) override {
    ++samples;
    checksum += s.ip + s.time + s.callchain.size() + s.read.group_size() + s.branch_stack.nr + s.raw.size();
    for (size_t i = 0; i < s.callchain.size(); ++i) checksum += s.callchain[i];
    for (size_t i = 0; i < s.branch_stack.nr && i < 64; ++i) checksum += s.branch_stack.at(i).to;
    for (size_t i = 0; i < s.read.values.size(); ++i) checksum += s.read.values[i];
    uint64_t sp = 0;
    s.regs_user.Get(7, &sp);
    checksum += sp + s.stack_user.valid().size();
    if (s.stack_user.dyn_size > s.stack_user.data.size()) Fail("dyn_size past the stack copy", s.stack_user.dyn_size, 0);
    if (s.has(pd::kSampleCallchain)) {
      for (size_t i = 0; i < s.callchain.size() && i < 16; ++i) {
        if (const pd::Mapping* m = spaces_.Find(s.pid, s.cpumode(), s.callchain[i])) {
          if (m->start > s.callchain[i] || s.callchain[i] >= m->end) Fail("mapping does not cover", m->start, m->end);
          checksum += m->FileAddress(s.callchain[i]);
        }
      }
    }
    if (unwinder_.CanUnwind(s)) {
      unwinder_.Unwind(s, &pcs_);
      if (pcs_.size() > jitdump::unwind::DwarfUnwinder::kMaxFrames) Fail("too many frames", pcs_.size(), 0);
    }
    checksum += spaces_.ThreadComm(s.tid).size();
  }
  void OnMmap(const pd::Mmap& m) override {
    ++side_band;
    checksum += m.filename.size() + m.build_id.size();
    spaces_.OnMmap(m);
  }
  void OnComm(const pd::Comm& c) override {
    ++side_band;
    spaces_.OnComm(c);
  }
  void OnTask(const pd::Task& t) override {
    ++side_band;
    spaces_.OnTask(t);
  }
  void OnLost(const pd::Lost&) override { ++side_band; }
  void OnThrottle(const pd::Throttle&) override { ++side_band; }
  void OnOther(const pd::RawRecord& r) override { checksum += r.body.size(); }

 private:
  pd::AddressSpaces spaces_;
  jitdump::unwind::DwarfUnwinder unwinder_;
  std::vector<uint64_t> pcs_;
};

int g_file = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_file < 0) {
    g_file = ::memfd_create("perfdata-fuzz", 0);
    if (g_file < 0) std::abort();
  }
  if (::ftruncate(g_file, 0) != 0) std::abort();
  if (size > 0 && ::pwrite(g_file, data, size, 0) != static_cast<ssize_t>(size)) std::abort();

  std::string error;
  std::unique_ptr<pd::PerfDataReader> reader = pd::PerfDataReader::FromFd(g_file, "input", &error);
  if (!reader) {
    if (error.empty()) Fail("refused without a message", size, 0);
    return 0;
  }
  const pd::Recording& rec = reader->recording();
  if (!rec.pipe && rec.events.empty()) Fail("a file format recording without events", size, 0);

  pd::ReadOptions options;
  options.other_records = true;
  options.sort_budget = 1 << 16;  // small enough that the fuzzer reaches the budget's path
  Sink first(rec);
  reader->Read(first, options);
  const pd::ReadStats a = reader->stats();
  if (a.samples > a.records) Fail("more samples than records", a.samples, a.records);
  if (reader->warnings().size() > 128) Fail("unbounded warnings", reader->warnings().size(), 0);

  // A regular file reads again, to the same records.
  Sink second(reader->recording());
  reader->Read(second, options);
  const pd::ReadStats b = reader->stats();
  if (b.records != a.records || b.samples != a.samples || b.truncated != a.truncated) {
    Fail("a second pass read other records", a.records, b.records);
  }
  if (second.samples != first.samples || second.side_band != first.side_band) {
    Fail("a second pass handed out other records", first.samples, second.samples);
  }

  // The side-band pass skips samples and hands out the same side-band records.
  Sink side(reader->recording());
  pd::ReadOptions no_samples = options;
  no_samples.samples = false;
  reader->Read(side, no_samples);
  if (side.samples != 0 || side.side_band != first.side_band) Fail("the side-band pass differs", side.side_band, first.side_band);
  return 0;
}
