#include "jitdump/report/perf_data_source.h"

#include <algorithm>
#include <span>
#include <unordered_map>

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/format.h"
#include "jitdump/report/native_symbols.h"
#include "jitdump/unwind/dwarf_unwinder.h"

namespace jitdump::report {
namespace {

namespace pd = jitdump::perfdata;

std::optional<uint64_t> TimeOf(const pd::SampleId& id) {
  return id.has_time() ? std::optional<uint64_t>(id.time) : std::nullopt;
}

// perf.data's side-band records as the ProcessMap takes them.
ScriptEvent MmapEvent(const pd::Mmap& m) {
  ScriptEvent e;
  e.kind = ScriptEventKind::kMmap;
  e.time_ns = TimeOf(m.sample_id);
  e.pid = m.pid;
  e.tid = m.tid;
  e.start = m.start;
  e.len = m.len;
  e.pgoff = m.pgoff;
  e.path.assign(m.filename);
  // MMAP2 says PROT_EXEC; an MMAP record is executable unless it is data (perf record --data).
  if (m.mmap2 ? (m.prot & 4) != 0 : !m.data()) e.prot = "x";
  return e;
}

ScriptEvent CommEvent(const pd::Comm& c) {
  ScriptEvent e;
  e.kind = ScriptEventKind::kComm;
  e.time_ns = TimeOf(c.sample_id);
  e.pid = c.pid;
  e.tid = c.tid;
  e.comm.assign(c.comm);
  e.exec = c.exec;
  return e;
}

ScriptEvent TaskEvent(const pd::Task& t) {
  ScriptEvent e;
  e.kind = t.fork ? ScriptEventKind::kFork : ScriptEventKind::kExit;
  e.time_ns = t.sample_id.has_time() ? t.sample_id.time : t.time;
  e.pid = t.pid;
  e.tid = t.tid;
  e.ppid = t.ppid;
  e.ptid = t.ptid;
  return e;
}

class SideBand : public pd::RecordSink {
 public:
  explicit SideBand(ProcessMap& processes) : processes_(processes) {}
  void OnMmap(const pd::Mmap& m) override { processes_.OnEvent(MmapEvent(m)); }
  void OnComm(const pd::Comm& c) override { processes_.OnEvent(CommEvent(c)); }
  void OnTask(const pd::Task& t) override { processes_.OnEvent(TaskEvent(t)); }

 private:
  ProcessMap& processes_;
};

// Samples to the profile reader, their frames placed in the address spaces the side-band
// records build up as the recording goes.
class Samples : public pd::RecordSink, public FrameMapper {
 public:
  Samples(const pd::Recording& recording, ProfileReader& reader, ProcessMap* processes, SymbolizedNames* names)
      : recording_(recording), reader_(reader), processes_(processes), names_(names), unwinder_(spaces_, recording) {
    spaces_.SetBuildIds(recording.features.build_ids);
    unknown_dso_ = reader_.dsos().Intern("[unknown]");
  }

  void OnMmap(const pd::Mmap& m) override {
    spaces_.OnMmap(m);
    // perf's relocation reference for kallsyms: where the recording's kernel had _text.
    if (names_ != nullptr && m.cpumode() == pd::kCpumodeKernel && m.filename == "[kernel.kallsyms]_text") {
      names_->SetKernelText(m.pgoff, m.start + m.len > m.start ? m.start + m.len : 0);
    }
    if (processes_ != nullptr) processes_->OnEvent(MmapEvent(m));
  }
  void OnComm(const pd::Comm& c) override {
    spaces_.OnComm(c);
    if (processes_ != nullptr) processes_->OnEvent(CommEvent(c));
  }
  void OnTask(const pd::Task& t) override {
    spaces_.OnTask(t);
    if (processes_ != nullptr) processes_->OnEvent(TaskEvent(t));
  }

  void OnSample(const pd::Sample& s) override {
    if (!shaped_) {
      // A stream's events are known by now.
      const RecordingShape shape = ShapeOf(recording_);
      reader_.SetShape(shape.dwarf_call_chains, shape.monotonic_clock);
      shaped_ = true;
    }
    StackSample out;
    out.pid = s.pid;
    out.tid = s.tid;
    if (s.has(pd::kSampleTime)) out.time_ns = s.time;
    out.period = s.period;
    out.comm = spaces_.ThreadComm(s.tid);
    out.event = recording_.events[s.event].name;
    // --call-graph dwarf: the kernel recorded only its own frames; the user stack is unwound
    // from the registers and stack bytes the sample carries, as perf does. In a JVM whose agent
    // wrote a method table, the Java frames below the first JIT frame perf's unwinding reaches
    // are walked too, interpreted ones named (interpreted_frames.h).
    if (unwinder_.CanUnwind(s)) {
      frames_.clear();
      for (const RawFrame& f : RawChain(s)) Push(s.pid, f.cpumode, f.ip);
      unwinder_.Unwind(s, &pcs_);
      InterpretedFrames* java = reader_.InterpretedFor(s.pid, TimeOf(s));
      if (java == nullptr || !WalkJava(s, *java)) {
        for (uint64_t pc : pcs_) Push(s.pid, pd::kCpumodeUser, pc);
      }
      out.call_chain = !frames_.empty();
      if (frames_.empty() && s.has(pd::kSampleIp)) Push(s.pid, s.cpumode(), s.ip);
      out.frames = frames_;
      reader_.Add(out);
      return;
    }
    // Frame pointers or no call chain: the reader resolves the raw addresses, asking Map for
    // the ones it has not seen.
    std::span<const RawFrame> frames = RawChain(s);
    out.call_chain = !frames.empty();
    if (frames.empty() && s.has(pd::kSampleIp)) {
      raw_[0] = RawFrame{s.ip, s.cpumode()};
      frames = std::span<const RawFrame>(raw_.data(), 1);
    }
    pid_ = s.pid;
    reader_.AddRaw(out, frames, *this);
  }

  // FrameMapper, for the sample AddRaw is given.
  StackFrame Map(const RawFrame& raw) override {
    frames_.clear();
    Push(pid_, raw.cpumode, raw.ip);
    return frames_.back();
  }
  uint64_t Generation() override { return spaces_.FindGeneration(pid_); }
  bool Unchanged(const RawFrame& raw, uint64_t since) override {
    return spaces_.Unchanged(pid_, raw.cpumode, raw.ip, since);
  }

 private:
  // The sample's call chain into raw_, each address with its cpumode: perf's rule is that a
  // context marker sets the cpumode of the addresses after it; any other marker means the
  // chain is corrupted, and perf discards it whole (the sample's ip stays). raw_ keeps the size
  // of the longest chain so far (one entry at least) and is written in place: a push_back per
  // frame (its capacity check and size update) was most of what this cost.
  std::span<const RawFrame> RawChain(const pd::Sample& s) {
    if (raw_.size() < std::max<size_t>(s.callchain.size(), 1)) raw_.resize(std::max<size_t>(s.callchain.size(), 1));
    if (!s.has(pd::kSampleCallchain)) return {};
    RawFrame* const first = raw_.data();
    RawFrame* out = first;
    uint16_t mode = s.cpumode();
    for (size_t i = 0; i < s.callchain.size(); ++i) {
      const uint64_t ip = s.callchain[i];
      if (pd::IsContextMarker(ip)) {
        if (!ModeOfMarker(ip, &mode)) return {};
        continue;
      }
      *out++ = RawFrame{ip, mode};
    }
    return std::span<const RawFrame>(first, static_cast<size_t>(out - first));
  }

  // The cpumode a call chain's context marker sets; false for the markers perf 6.1 does not
  // take (it discards such a chain: add_callchain_ip in util/machine.c).
  static bool ModeOfMarker(uint64_t marker, uint16_t* mode) {
    switch (marker) {
      case pd::kContextKernel: *mode = pd::kCpumodeKernel; return true;
      case pd::kContextUser: *mode = pd::kCpumodeUser; return true;
      case pd::kContextHypervisor: *mode = pd::kCpumodeHypervisor; return true;
      default: return false;
    }
  }

  static std::optional<uint64_t> TimeOf(const pd::Sample& s) {
    return s.has(pd::kSampleTime) ? std::optional<uint64_t>(s.time) : std::nullopt;
  }

  // The sample's user frames with its Java frames walked: the native frames perf's DWARF
  // unwinding gave up to the first JIT frame, then the frames the walk finds from there.
  // False (nothing pushed) when the walk found nothing.
  bool WalkJava(const pd::Sample& s, InterpretedFrames& java) {
    regs_.mask = s.regs_user.mask;
    regs_.values.resize(s.regs_user.values.size());
    for (size_t i = 0; i < regs_.values.size(); ++i) regs_.values[i] = s.regs_user.values[i];
    const std::optional<uint64_t> time = reader_.times_are_dump_clock() ? TimeOf(s) : std::nullopt;
    // The first JIT frame of the unwinding: perf's unwinder stops there (no CFI). A caller's pc
    // is its return address minus one.
    size_t first_jit = pcs_.size();
    for (size_t i = 0; i < pcs_.size(); ++i) {
      if (java.KindAt(i == 0 ? pcs_[i] : pcs_[i] + 1, time) != CodeKind::kOther) {
        first_jit = i;
        break;
      }
    }
    std::optional<uint64_t> caller;
    if (first_jit > 0 && first_jit < pcs_.size()) caller = pcs_[first_jit] + 1;
    const std::vector<JavaFrame> walked =
        java.Walk(regs_, s.stack_user.valid(), time, caller, std::nullopt, &reader_.interpreted_stats());
    if (walked.empty()) return false;
    for (size_t i = 0; i < first_jit && i < pcs_.size(); ++i) Push(s.pid, pd::kCpumodeUser, pcs_[i]);
    for (const JavaFrame& f : walked) {
      // Callers one byte into their call, as perf's unwinders give them.
      const uint64_t pc = f.return_address && f.pc > 0 ? f.pc - 1 : f.pc;
      Push(s.pid, pd::kCpumodeUser, pc);
      if (f.interpreted && f.method != nullptr) {
        StackFrame& frame = frames_.back();
        frame.interpreted = f.method;
        frame.interpreted_class = f.klass;
        frame.interpreted_line = f.line;
        frame.interpreted_bci = f.bci;
      }
    }
    return true;
  }

  void Push(uint32_t pid, uint16_t mode, uint64_t ip) {
    StackFrame f;
    f.addr = f.file_addr = ip;
    const pd::Mapping* m = spaces_.Find(pid, mode, ip);
    if (m == nullptr) {
      f.dso = unknown_dso_;
    } else {
      f.mapping = m;
      f.file_addr = m->FileAddress(ip);
      if (m->dso != last_dso_) {
        // A stack's frames come in runs of one DSO (the kernel's, the JIT area's, libjvm's).
        const auto it = dso_ids_.find(m->dso);
        last_dso_id_ = it != dso_ids_.end() ? it->second
                                            : dso_ids_.emplace(m->dso, reader_.dsos().Intern(m->dso->name)).first->second;
        last_dso_ = m->dso;
      }
      f.dso = last_dso_id_;
    }
    frames_.push_back(f);
  }

  const pd::Recording& recording_;
  ProfileReader& reader_;
  ProcessMap* processes_;
  SymbolizedNames* names_;
  pd::AddressSpaces spaces_;  // before unwinder_, which uses it
  std::unordered_map<const pd::Dso*, uint32_t> dso_ids_;
  const pd::Dso* last_dso_ = nullptr;  // the last frame's, and its id
  uint32_t last_dso_id_ = 0;
  uint32_t unknown_dso_ = 0;
  bool shaped_ = false;
  unwind::DwarfUnwinder unwinder_;
  std::vector<uint64_t> pcs_;
  SampledRegisters regs_;
  std::vector<StackFrame> frames_;
  std::vector<RawFrame> raw_;
  uint32_t pid_ = 0;  // the sample's given to AddRaw
};

}  // namespace

RecordingShape ShapeOf(const pd::Recording& recording) {
  RecordingShape shape;
  shape.monotonic_clock = !recording.events.empty();
  shape.has_time = !recording.events.empty();
  for (const pd::Event& e : recording.events) {
    RecordedEvent event;
    event.name = e.name;
    event.use_clockid = e.attr.use_clockid();
    event.clockid = e.attr.clockid;
    shape.events.push_back(event);
    if (e.attr.sample_type & pd::kSampleStackUser) shape.dwarf_call_chains = true;
    if (!(e.attr.sample_type & pd::kSampleTime)) shape.has_time = false;
    if (!e.attr.use_clockid() || e.attr.clockid != 1) shape.monotonic_clock = false;  // CLOCK_MONOTONIC is 1
  }
  return shape;
}

std::unique_ptr<PerfDataSource> PerfDataSource::Open(const std::string& path, std::string* error) {
  std::unique_ptr<pd::PerfDataReader> reader = pd::PerfDataReader::Open(path, error);
  if (!reader) return nullptr;
  return std::unique_ptr<PerfDataSource>(new PerfDataSource(std::move(reader)));
}

RecordingShape PerfDataSource::Shape() const { return ShapeOf(reader_->recording()); }

void PerfDataSource::ReadSideBand(ProcessMap& processes) {
  SideBand sink(processes);
  pd::ReadOptions options;
  options.samples = false;
  reader_->Read(sink, options);
}

void PerfDataSource::ReadSamples(ProfileReader& reader, ProcessMap* processes) {
  if (symbolize_) {
    names_ = std::make_unique<SymbolizedNames>(reader_->recording());
    names_->set_streaming(!reader_->rereadable());
    reader.set_native_symbols(names_.get());
  }
  Samples sink(reader_->recording(), reader, processes, names_.get());
  reader_->Read(sink, pd::ReadOptions{});
  reader.NameNatives();  // while the sink's address spaces (the frames' DSOs) are there
  reader.set_native_symbols(nullptr);
}

std::vector<symbols::FileReport> PerfDataSource::SymbolFiles() const {
  return names_ ? names_->Files() : std::vector<symbols::FileReport>{};
}

PerfDataSource::PerfDataSource(std::unique_ptr<pd::PerfDataReader> reader) : reader_(std::move(reader)) {}
PerfDataSource::~PerfDataSource() = default;

}  // namespace jitdump::report
