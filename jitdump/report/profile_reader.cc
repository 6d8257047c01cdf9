#include "jitdump/report/profile_reader.h"

#include <sys/stat.h>

#include <algorithm>

#include "jitdump/report/classify.h"
#include "jitdump/report/dump_locator.h"
#include "jitdump/report/printable.h"

namespace jitdump::report {

struct ProfileReader::Jvm {
  std::shared_ptr<JvmCode> code;  // null when no dump could be found for the marker
  bool tried = false;
  uint32_t index = 0;    // in jvms_
  uint32_t mapping = 0;  // the profile's mapping for its JIT code
};

namespace {

// cpu-clock and task-clock count nanoseconds: their period is CPU time. "cpu-clock:u" too.
bool TimeBasedEvent(std::string_view event) {
  const std::string_view name = event.substr(0, event.find(':'));
  return name == "cpu-clock" || name == "task-clock";
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool KnownSymbol(const std::string& sym) { return !sym.empty() && sym != "[unknown]"; }

}  // namespace

ProfileReader::ProfileReader(const ProcessMap& processes, ReadOptions options)
    : processes_(&processes), options_(std::move(options)) {
  budget_.limit = options_.dump_memory;
}

ProfileReader::ProfileReader(std::unique_ptr<JvmCode> only_dump, ReadOptions options)
    : options_(std::move(options)), single_dump_(true) {
  auto jvm = std::make_unique<Jvm>();
  jvm->tried = true;
  jvm->code = std::move(only_dump);
  if (jvm->code) jvm->mapping = builder_.AddMapping(jvm->code->path(), jvm->code->low(), jvm->code->high(), 0);
  jvms_.push_back(std::move(jvm));
}

ProfileReader::~ProfileReader() = default;

ProfileReader::Jvm* ProfileReader::JvmFor(const ScriptSample& sample, int64_t* marker) {
  if (single_dump_) {
    *marker = 0;
    return jvms_[0]->code ? jvms_[0].get() : nullptr;
  }
  *marker = processes_->MarkerFor(sample.pid, sample.time_ns);
  if (*marker < 0) return nullptr;
  const size_t m = static_cast<size_t>(*marker);
  if (jvms_.size() <= m) jvms_.resize(processes_->markers().size());
  if (!jvms_[m]) {
    jvms_[m] = std::make_unique<Jvm>();
    jvms_[m]->index = static_cast<uint32_t>(m);
  }
  Jvm& jvm = *jvms_[m];
  if (!jvm.tried) {
    jvm.tried = true;
    const DumpMarker& dm = processes_->markers()[m];
    std::string tried;
    for (const std::string& path : DumpCandidates(dm, options_.dump_dirs)) {
      std::string error;
      std::shared_ptr<JvmCode> code = CachedDump(path);
      if (!code) {
        std::pair<uint64_t, uint64_t> identity{};
        code = JvmCode::Load(path, &budget_, &error, &identity);
        if (code) dumps_[identity] = code;
      }
      if (code && AcceptsDump(dm, code->header_pid())) {
        jvm.code = std::move(code);
        break;
      }
      if (code) {
        error = Printable(path) + ": header pid " + std::to_string(code->header_pid()) + " belongs to another process";
      }
      if (error.find("No such file") == std::string::npos) tried += "\n  " + error;
    }
    if (jvm.code) {
      jvm.mapping = builder_.AddMapping(jvm.code->path(), jvm.code->low(), jvm.code->high(), 0);
    } else {
      stats_.warnings.push_back("no readable dump for pid " + std::to_string(dm.pid) + " (its agent mapped " +
                                Printable(dm.path) + "; give the directory holding a copy with --dumps)" + tried);
    }
  }
  return jvm.code ? &jvm : nullptr;
}

std::shared_ptr<JvmCode> ProfileReader::CachedDump(const std::string& path) const {
  struct stat st {};
  if (dumps_.empty() || ::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  const auto it = dumps_.find({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)});
  return it == dumps_.end() ? nullptr : it->second;
}

uint32_t ProfileReader::ProcessFor(const ScriptSample& sample, int64_t marker, const Jvm* jvm) {
  const auto key = std::make_pair(sample.pid, single_dump_ ? int64_t{-1} : marker);
  const auto it = process_ids_.find(key);
  if (it != process_ids_.end()) return it->second;
  std::string command = processes_ ? processes_->CommandOf(sample.pid) : std::string();
  if (command.empty()) command = sample.comm;
  const uint32_t id = builder_.AddProcess(sample.pid, command, jvm ? jvm->code->path() : std::string());
  if (jvm) builder_.profile().processes[id].dump_pid = jvm->code->header_pid();
  process_ids_.emplace(key, id);
  return id;
}

uint32_t ProfileReader::MappingOf(const std::string& dso) {
  if (dso.empty()) return 0;
  const auto it = mappings_.find(dso);
  if (it != mappings_.end()) return it->second;
  const uint32_t id = builder_.AddMapping(dso, 0, 0, 0);
  mappings_.emplace(dso, id);
  return id;
}

uint32_t ProfileReader::JitLocation(Jvm& jvm, size_t record, uint64_t addr) {
  const JitKey key{jvm.index, static_cast<uint32_t>(record), addr};
  const auto it = jit_locations_.find(key);
  if (it != jit_locations_.end()) return it->second;
  std::vector<Line> lines;
  for (const JitLine& frame : jvm.code->Chain(record, addr)) {
    lines.push_back(Line{builder_.AddFunction(frame.function, frame.file, frame.kind), frame.line});
  }
  const uint32_t id = builder_.AddLocation(addr, jvm.mapping, lines);
  jit_locations_.emplace(key, id);
  return id;
}

uint32_t ProfileReader::NativeLocation(const ScriptFrame& frame, uint64_t addr, bool kernel, bool jit_area) {
  const uint32_t mapping = MappingOf(frame.dso);
  const NativeKey key{mapping, addr};
  const auto it = native_locations_.find(key);
  if (it != native_locations_.end()) return it->second;
  const bool known = KnownSymbol(frame.sym);
  const bool no_dso = frame.dso.empty() || frame.dso == "[unknown]";
  std::string name = frame.sym;
  if (!known) name = no_dso || jit_area ? "[unknown]" : "[" + std::string(Basename(frame.dso)) + "]";
  FrameKind kind = FrameKind::kNative;
  if (kernel) {
    kind = FrameKind::kKernel;
  } else if (jit_area) {
    // JIT code no dump describes: perf's name from a perf map, if it had one.
    kind = known ? KindOfName(frame.sym) : FrameKind::kUnknown;
  } else if (no_dso) {
    kind = FrameKind::kUnknown;
  }
  const uint32_t id = builder_.AddLocation(addr, mapping, {Line{builder_.AddFunction(name, "", kind), 0}});
  native_locations_.emplace(key, id);
  return id;
}

uint32_t ProfileReader::Frame(const ScriptSample& sample, size_t index, Jvm* jvm) {
  const ScriptFrame& frame = sample.frames[index];
  ++stats_.frames;
  const bool kernel = IsKernelFrame(frame.addr, frame.dso);
  // Where the CPU was: the sampled ip, or the user pc the kernel interrupted (the first user
  // frame after kernel frames). Every other frame of a chain is a return address.
  bool exact = !sample.call_chain || index == 0;
  if (!exact && !kernel) {
    const ScriptFrame& inner = sample.frames[index - 1];
    exact = IsKernelFrame(inner.addr, inner.dso);
  }
  const bool step_back = !exact && !options_.return_addresses_adjusted;
  const bool jit_area = !kernel && IsJitCandidateDso(frame.dso);
  if (!jit_area || jvm == nullptr) {
    return NativeLocation(frame, step_back && frame.addr > 0 ? frame.addr - 1 : frame.addr, kernel, jit_area);
  }
  ++stats_.jit_frames;
  uint64_t addr = frame.addr;
  int64_t record = -1;
  uint64_t code_index;
  const bool jitted_elf = JittedElfIndex(frame.dso, &code_index);
  if (jitted_elf) record = jvm->code->LoadOfJittedElf(code_index, &addr);  // the ELF names its load
  const uint64_t lookup = step_back && addr > 0 ? addr - 1 : addr;
  if (!jitted_elf) {
    const int64_t final_load = jvm->code->timeline().FindFinal(lookup);
    record = final_load;
    if (sample.time_ns && options_.times_are_dump_clock) {
      const LoadTimeline::Hit hit = jvm->code->timeline().Find(lookup, *sample.time_ns);
      record = hit.record;
      if (hit.before_load) ++stats_.jit_before_load;
      if (record >= 0 && record != final_load) ++stats_.jit_time_resolved;
    }
  }
  if (record < 0) {
    // perf's "[unknown]" DSO is no mapping at all, mostly a frame pointer chain gone astray: only
    // a frame in a mapping the JIT code lives in counts as JIT code left unnamed.
    if (frame.dso.empty() || frame.dso == "[unknown]") --stats_.jit_frames;
    return NativeLocation(frame, lookup, false, true);
  }
  ++stats_.jit_resolved;
  if (jvm->code->HasInlineRecord(static_cast<size_t>(record))) ++stats_.jit_expanded;
  return JitLocation(*jvm, static_cast<size_t>(record), lookup);
}

void ProfileReader::OnSample(const ScriptSample& sample) {
  if (!sample.event.empty() && !options_.every_event) {
    if (options_.event.empty()) options_.event = sample.event;
    if (sample.event != options_.event) {
      ++stats_.skipped_events[sample.event];
      return;
    }
  }
  if (stats_.samples == 0) time_based_ = TimeBasedEvent(sample.event);
  ++stats_.samples;
  int64_t marker = -1;
  Jvm* jvm = JvmFor(sample, &marker);
  const uint32_t process = ProcessFor(sample, marker, jvm);
  stack_.clear();
  for (size_t i = 0; i < sample.frames.size(); ++i) stack_.push_back(Frame(sample, i, jvm));
  if (stack_.empty()) {
    // perf printed no ip at all: still a sample of this thread.
    stack_.push_back(NativeLocation(ScriptFrame{}, 0, false, false));
  }
  const uint64_t nanos = time_based_ ? sample.period : 0;
  builder_.AddSample(stack_, process, sample.comm, 1, nanos);
  Profile& profile = builder_.profile();
  if (time_based_ && profile.period_ns == 0) profile.period_ns = sample.period;
  if (sample.time_ns) {
    if (profile.start_ns == 0 || *sample.time_ns < profile.start_ns) profile.start_ns = *sample.time_ns;
    profile.end_ns = std::max(profile.end_ns, *sample.time_ns);
  }
}

Profile ProfileReader::Take() {
  jit_locations_.clear();
  native_locations_.clear();
  mappings_.clear();
  process_ids_.clear();
  return builder_.Take();
}

}  // namespace jitdump::report
