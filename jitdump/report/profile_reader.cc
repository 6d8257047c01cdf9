#include "jitdump/report/profile_reader.h"

#include <sys/stat.h>

#include <algorithm>

#include "jitdump/report/classify.h"
#include "jitdump/report/dump_locator.h"
#include "jitdump/format/text.h"

namespace jitdump::report {

struct ProfileReader::Jvm {
  std::shared_ptr<JvmCode> code;  // null when no dump could be found for the marker
  bool tried = false;
  uint32_t index = 0;    // in jvms_
  uint32_t mapping = 0;  // the profile's mapping for its JIT code
  // Its interpreted frames named (when its dump came with a usable method table).
  std::unique_ptr<InterpretedFrames> interpreted;
  uint32_t interpreted_mapping = 0;  // the profile's mapping for them: "[interpreted] DUMP"
  bool warned_undecoded = false;     // that some of its lines and inline chains were left out
  FlatIndex locations;               // JitLocation's: (address, load record) -> location
};

namespace {

// cpu-clock and task-clock count nanoseconds: their period is CPU time. "cpu-clock:u" too.
bool TimeBasedEvent(std::string_view event) {
  const std::string_view name = event.substr(0, event.find(':'));
  return name == "cpu-clock" || name == "task-clock";
}

// "libc.so.6" -> "[libc.so.6]"; "[kernel.kallsyms]" stays as it is.
std::string Bracketed(std::string_view name) {
  if (!name.empty() && name.front() == '[' && name.back() == ']') return std::string(name);
  return "[" + std::string(name) + "]";
}

bool KnownSymbol(std::string_view sym) { return !sym.empty() && sym != "[unknown]"; }

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

ProfileReader::Jvm* ProfileReader::JvmFor(const StackSample& sample, int64_t* marker) {
  if (single_dump_) {
    *marker = 0;
    return jvms_[0]->code ? jvms_[0].get() : nullptr;
  }
  *marker = MarkerOf(sample);
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
      if (const MethodTable* table = jvm.code->methods(); table != nullptr && table->layout) {
        jvm.interpreted = std::make_unique<InterpretedFrames>(*jvm.code, *table);
        jvm.interpreted_mapping = builder_.AddMapping("[interpreted] " + jvm.code->path(), 0, 0, 0);
        ++stats_.jvms_with_method_table;
      }
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

int64_t ProfileReader::MarkerOf(const StackSample& sample) {
  if (!sample.time_ns) return processes_->MarkerFor(sample.pid, std::nullopt);
  const uint64_t time = *sample.time_ns;
  MarkerMemo& memo = marker_memo_[sample.pid % marker_memo_.size()];
  if (memo.pid != sample.pid || memo.generation != processes_->generation() || time < memo.span.from ||
      time >= memo.span.until) {
    memo.pid = sample.pid;
    memo.generation = processes_->generation();
    memo.span = processes_->MarkerSpanFor(sample.pid, time);
  }
  return memo.span.marker;
}

uint32_t ProfileReader::ProcessFor(const StackSample& sample, int64_t marker, const Jvm* jvm) {
  const auto key = std::make_pair(sample.pid, single_dump_ ? int64_t{-1} : marker);
  if (process_memo_.id != UINT32_MAX && process_memo_.pid == key.first && process_memo_.marker == key.second) {
    return process_memo_.id;
  }
  const auto it = process_ids_.find(key);
  if (it != process_ids_.end()) {
    process_memo_ = ProcessMemo{key.first, key.second, it->second};
    return it->second;
  }
  std::string command = processes_ ? processes_->CommandOf(sample.pid) : std::string();
  if (command.empty()) command = std::string(sample.comm);
  const uint32_t id = builder_.AddProcess(sample.pid, command, jvm ? jvm->code->path() : std::string());
  if (jvm) builder_.profile().processes[id].dump_pid = jvm->code->header_pid();
  if (processes_) builder_.profile().processes[id].executable = processes_->ExecutableOf(sample.pid);
  process_ids_.emplace(key, id);
  process_memo_ = ProcessMemo{key.first, key.second, id};
  return id;
}

uint32_t ProfileReader::MappingOf(uint32_t dso) {
  if (dso == 0) return 0;
  const auto it = mappings_.find(dso);
  if (it != mappings_.end()) return it->second;
  const uint32_t id = builder_.AddMapping(dsos_[dso].name, 0, 0, 0);
  mappings_.emplace(dso, id);
  return id;
}

uint32_t ProfileReader::JitLocation(Jvm& jvm, size_t record, uint64_t addr) {
  bool inserted;
  FlatIndex::Entry& entry = jvm.locations.Insert(addr, static_cast<uint32_t>(record), &inserted);
  if (!inserted) return entry.value();
  jit_lines_.clear();
  for (const JitLine& frame : jvm.code->Chain(record, addr)) jit_lines_.push_back(Line{JitFunction(frame), frame.line});
  const uint32_t id = builder_.AddLocation(addr, jvm.mapping, jit_lines_);
  entry.set_value(id);  // nothing above inserts into jvm.locations: `entry` still stands
  if (jvm.code->undecoded() != 0 && !jvm.warned_undecoded) {
    jvm.warned_undecoded = true;
    stats_.warnings.push_back(Printable(jvm.code->path()) + ": some lines and inline chains left out (over the " +
                              "memory budget for the dumps, give more with --dump-memory; or the file shrank)");
  }
  return id;
}

uint32_t ProfileReader::JitFunction(const JitLine& frame) {
  auto add = [&] {
    return frame.java_name ? builder_.AddFunction(JavaFrameName(frame.function), frame.file, frame.kind)
                           : builder_.AddFunction(frame.function, frame.file, frame.kind);
  };
  // The memo keeps sizes in 32 bits.
  if (frame.function.size() > UINT32_MAX || frame.file.size() > UINT32_MAX) return add();
  bool inserted;
  const JitFunctionKey key{frame.function, frame.file, frame.kind, frame.java_name};
  JitFunctionEntry& entry = jit_functions_.Insert(key, &inserted);
  if (inserted) entry.value = add();  // the builder touches no memo entry
  return entry.value;
}

InterpretedFrames* ProfileReader::InterpretedFor(uint32_t pid, std::optional<uint64_t> time) {
  StackSample probe;
  probe.pid = pid;
  probe.time_ns = time;
  int64_t marker = -1;
  Jvm* jvm = JvmFor(probe, &marker);
  return jvm != nullptr ? jvm->interpreted.get() : nullptr;
}

uint32_t ProfileReader::InterpretedLocation(Jvm& jvm, const StackFrame& frame) {
  const auto key = std::make_pair(frame.interpreted, frame.interpreted_line);
  const auto it = interpreted_locations_.find(key);
  if (it != interpreted_locations_.end()) return it->second;
  const TableClass* klass = frame.interpreted_class;
  const uint32_t function = builder_.AddFunction(InterpretedFrames::FrameName(klass, *frame.interpreted),
                                                 klass != nullptr ? klass->file : std::string(),
                                                 FrameKind::kInterpreted);
  // Every frame of a method at one line is one location (the interpreter's pc says nothing of
  // the Java code), at the address of the first bytecode sampled there.
  const uint64_t address = frame.interpreted->code_base + static_cast<uint64_t>(std::max<int64_t>(frame.interpreted_bci, 0));
  const uint32_t id = builder_.AddLocation(address, jvm.interpreted_mapping, {Line{function, frame.interpreted_line}});
  interpreted_locations_.emplace(key, id);
  return id;
}

uint32_t ProfileReader::NativeLocation(const StackSample& sample, const StackFrame& frame, uint64_t step, bool kernel,
                                       bool jit_area) {
  const uint64_t addr = frame.file_addr >= step ? frame.file_addr - step : frame.file_addr;
  bool inserted;
  FlatIndex::Entry& entry = native_frames_.Insert(addr, frame.dso, &inserted);
  if (!inserted) return entry.value();
  const FrameDso& dso = dsos_[frame.dso];
  const uint32_t mapping = MappingOf(frame.dso);
  if (!frame.named && native_symbols_ != nullptr && !dso.none) {
    StackFrame at = frame;
    at.addr = frame.addr >= step ? frame.addr - step : frame.addr;
    at.file_addr = addr;
    const auto ticket = static_cast<uint32_t>(unnamed_natives_.size());
    if (native_symbols_->Defer(sample.pid, at, dso, ticket)) {
      const uint32_t id = builder_.AddUnnamedLocation(addr, mapping);
      unnamed_natives_.push_back(UnnamedNative{id, frame.dso, kernel, jit_area});
      entry.set_value(id);
      return id;
    }
  }
  const Line line = FallbackLine(frame, dso, kernel, jit_area);
  const uint32_t id = builder_.AddLocation(addr, mapping, {line});
  entry.set_value(id);  // nothing above inserts into native_frames_: `entry` still stands
  return id;
}

Line ProfileReader::FallbackLine(const StackFrame& frame, const FrameDso& dso, bool kernel, bool jit_area) {
  FrameKind kind = kernel ? FrameKind::kKernel : FrameKind::kNative;
  const bool known = frame.named && KnownSymbol(frame.sym);
  std::string name = known ? std::string(frame.sym) : std::string();
  if (!known) name = dso.none || jit_area ? "[unknown]" : Bracketed(BaseName(dso.name));
  if (kernel) {
    kind = FrameKind::kKernel;
  } else if (jit_area) {
    // JIT code no dump describes: perf's name from a perf map, if it had one.
    kind = known ? KindOfName(frame.sym) : FrameKind::kUnknown;
  } else if (dso.none) {
    kind = FrameKind::kUnknown;
  }
  return Line{builder_.AddFunction(name, "", kind), 0};
}

void ProfileReader::NameNatives() {
  ReleaseReadState();
  if (unnamed_natives_.empty()) return;
  std::vector<Line> lines;
  auto name = [&](uint32_t ticket, std::span<const NativeName> names) {
    if (ticket >= unnamed_natives_.size()) return;
    const UnnamedNative& frame = unnamed_natives_[ticket];
    if (!builder_.profile().locations[frame.location].lines.empty()) return;  // named already
    lines.clear();
    for (const NativeName& n : names) {
      const FrameKind kind = frame.jit_area ? KindOfName(n.function) : frame.kernel ? FrameKind::kKernel : FrameKind::kNative;
      lines.push_back(Line{builder_.AddFunction(n.function, n.file, kind), n.line});
    }
    if (lines.empty()) lines.push_back(FallbackLine(StackFrame{}, dsos_[frame.dso], frame.kernel, frame.jit_area));
    builder_.SetLines(frame.location, lines);
  };
  if (native_symbols_ != nullptr) native_symbols_->NameDeferred(name);
  // What the symbols did not answer for (none, unless they were taken away) is named after its DSO.
  for (uint32_t ticket = 0; ticket < unnamed_natives_.size(); ++ticket) name(ticket, {});
  decltype(unnamed_natives_)().swap(unnamed_natives_);
}

ProfileReader::Resolved ProfileReader::Resolve(const StackSample& sample, const StackFrame& frame, bool first,
                                               bool after_kernel, Jvm* jvm) {
  const FrameDso& dso = dsos_[frame.dso];
  Resolved out;
  out.kernel = (frame.addr >> 48) == 0xffff || dso.kernel;
  if (frame.interpreted != nullptr && jvm != nullptr && jvm->interpreted) {
    out.location = InterpretedLocation(*jvm, frame);
    out.cacheable = false;
    return out;
  }
  // Where the CPU was: the sampled ip, or the user pc the kernel interrupted (the first user
  // frame after kernel frames). Every other frame of a chain is a return address.
  const bool exact = first || (after_kernel && !out.kernel);
  const uint64_t step = !exact && !options_.return_addresses_adjusted ? 1 : 0;
  out.jit_area = !out.kernel && dso.jit_candidate;
  if (!out.jit_area || jvm == nullptr) {
    out.location = NativeLocation(sample, frame, step, out.kernel, out.jit_area);
    return out;
  }
  out.jit = true;
  if (dso.jitted_elf || !sample.time_ns || !options_.times_are_dump_clock) {
    out.hit = ResolveJit(sample, frame, step, *jvm);  // no time to key a cache on, or perf inject's ELFs
    out.cacheable = false;
  } else {
    out.timed = true;
    const uint64_t lookup = frame.addr >= step ? frame.addr - step : frame.addr;
    const uint64_t epoch = jvm->code->timeline().Epoch(*sample.time_ns);
    bool inserted;
    FlatIndex::Entry& entry = jit_frames_.Insert(lookup, jvm->index, &inserted);
    if (!inserted && jit_cache_[entry.value()].epoch == epoch) {
      out.hit = jit_cache_[entry.value()];
    } else {
      if (inserted) {
        entry.set_value(static_cast<uint32_t>(jit_cache_.size()));
        jit_cache_.emplace_back();
      }
      const uint32_t slot = entry.value();  // ResolveJit may grow the index
      out.hit = ResolveJit(sample, frame, step, *jvm);
      out.hit.epoch = epoch;
      jit_cache_[slot] = out.hit;
    }
  }
  out.location = out.hit.location;
  return out;
}

void ProfileReader::Count(const Resolved& resolved) {
  ++stats_.frames;
  if (!resolved.jit) return;
  stats_.jit_frames += resolved.hit.counted;
  stats_.jit_resolved += resolved.hit.resolved;
  stats_.jit_expanded += resolved.hit.expanded;
  stats_.jit_before_load += resolved.hit.before_load;
  stats_.jit_time_resolved += resolved.hit.time_resolved;
}

ProfileReader::JitFrame ProfileReader::ResolveJit(const StackSample& sample, const StackFrame& frame, uint64_t step,
                                                  Jvm& jvm) {
  const FrameDso& dso = dsos_[frame.dso];
  JitFrame out;
  uint64_t addr = frame.addr;
  int64_t record = -1;
  if (dso.jitted_elf) record = jvm.code->LoadOfJittedElf(dso.jitted_index, &addr);  // the ELF names its load
  const uint64_t lookup = addr >= step ? addr - step : addr;
  if (!dso.jitted_elf) {
    const int64_t final_load = jvm.code->timeline().FindFinal(lookup);
    record = final_load;
    if (sample.time_ns && options_.times_are_dump_clock) {
      const LoadTimeline::Hit hit = jvm.code->timeline().Find(lookup, *sample.time_ns);
      record = hit.record;
      out.before_load = hit.before_load;
      out.time_resolved = record >= 0 && record != final_load;
    }
  }
  if (record < 0) {
    // perf's "[unknown]" DSO is no mapping at all, mostly a frame pointer chain gone astray: only
    // a frame in a mapping the JIT code lives in counts as JIT code left unnamed.
    out.counted = !dso.none;
    out.location = NativeLocation(sample, frame, step, false, true);
    return out;
  }
  out.resolved = true;
  out.expanded = jvm.code->HasInlineRecord(static_cast<size_t>(record));
  out.location = JitLocation(jvm, static_cast<size_t>(record), lookup);
  return out;
}

void ProfileReader::OnSample(const ScriptSample& sample) {
  script_frames_.resize(sample.frames.size());
  for (size_t i = 0; i < sample.frames.size(); ++i) {
    const ScriptFrame& f = sample.frames[i];
    StackFrame& out = script_frames_[i];
    out.addr = out.file_addr = f.addr;
    out.dso = dsos_.Intern(f.dso);
    out.sym = f.sym;
    out.named = true;
    out.mapping = nullptr;
  }
  StackSample s;
  s.pid = sample.pid;
  s.tid = sample.tid;
  s.time_ns = sample.time_ns;
  s.period = sample.period;
  s.comm = sample.comm;
  s.event = sample.event;
  s.frames = script_frames_;
  s.call_chain = sample.call_chain;
  Add(s);
}

bool ProfileReader::Accept(const StackSample& sample) {
  if (!sample.event.empty() && !options_.every_event) {
    if (options_.event.empty()) options_.event = std::string(sample.event);
    if (sample.event != options_.event) {
      ++stats_.skipped_events[std::string(sample.event)];
      return false;
    }
  }
  if (stats_.samples == 0) time_based_ = TimeBasedEvent(sample.event);
  ++stats_.samples;
  return true;
}

void ProfileReader::Add(const StackSample& sample) {
  if (!Accept(sample)) return;
  int64_t marker = -1;
  Jvm* jvm = JvmFor(sample, &marker);
  const uint32_t process = ProcessFor(sample, marker, jvm);
  stack_.clear();
  bool after_kernel = false;
  for (size_t i = 0; i < sample.frames.size(); ++i) {
    const Resolved resolved = Resolve(sample, sample.frames[i], !sample.call_chain || i == 0, after_kernel, jvm);
    Count(resolved);
    stack_.push_back(resolved.location);
    after_kernel = resolved.kernel;
  }
  Finish(sample, process);
}

namespace {

// RawFrameCache::Entry::flags: what a raw frame resolved to depends on and counts for.
enum RawFlag : uint8_t {
  kRawKernel = 1 << 0,   // Resolved::kernel
  kRawJitArea = 1 << 1,  // Resolved::jit_area: valid for Entry::jvm only (Resolved::jit when a JVM)
  kRawTimed = 1 << 2,    // Resolved::timed: valid for Entry::epoch only
  kRawCounted = 1 << 3,  // JitFrame's
  kRawResolved = 1 << 4,
  kRawExpanded = 1 << 5,
  kRawBeforeLoad = 1 << 6,
  kRawTimeResolved = 1 << 7,
};

// A frame's place in its stack, part of its cache key: the first of its sample (or its only ip),
// or the one after a kernel frame; either says its address is where the CPU was, not a return
// address.
uint8_t PositionOf(bool first, bool after_kernel) {
  return static_cast<uint8_t>((first ? 1 : 0) | (after_kernel ? 2 : 0));
}

}  // namespace

inline void ProfileReader::CountCached(uint8_t flags, uint32_t jvm) {
  ++stats_.frames;
  if ((flags & kRawJitArea) && jvm != UINT32_MAX) {
    stats_.jit_frames += (flags & kRawCounted) != 0;
    stats_.jit_resolved += (flags & kRawResolved) != 0;
    stats_.jit_expanded += (flags & kRawExpanded) != 0;
    stats_.jit_before_load += (flags & kRawBeforeLoad) != 0;
    stats_.jit_time_resolved += (flags & kRawTimeResolved) != 0;
  }
}

void ProfileReader::AddRaw(const StackSample& sample, std::span<const RawFrame> frames, FrameMapper& mapper) {
  if (!Accept(sample)) return;
  int64_t marker = -1;
  Jvm* jvm = JvmFor(sample, &marker);
  const uint32_t process = ProcessFor(sample, marker, jvm);
  const uint32_t jvm_index = jvm != nullptr ? jvm->index : UINT32_MAX;
  const bool timed = jvm != nullptr && sample.time_ns && options_.times_are_dump_clock;
  const uint64_t generation = mapper.Generation();
  std::optional<uint64_t> epoch;  // the JVM's, asked for once, when a frame depends on it
  auto epoch_now = [&] {
    if (!epoch) epoch = jvm->code->timeline().Epoch(*sample.time_ns);
    return *epoch;
  };
  // The frames at the root end that this thread's last sample had too resolve as they did then
  // when the process's mappings and the JVM are the same (and its code map's epoch, for the JIT
  // frames timed by it): from `reuse_from` on, once the position there is the same as well.
  LastStacks::Stack& last = last_stacks_.Slot(sample.tid);
  size_t shared = 0;
  if (last.tid == sample.tid && last.pid == sample.pid && last.jvm == jvm_index && last.generation == generation) {
    shared = LastStacks::CommonRoot(last.frames, frames);
  }
  const size_t reuse_from = frames.size() - shared;
  // One location and one kept frame for each frame, written in place: resized, not cleared,
  // only the entries past the last sample's are made (a push_back each was a fifth of the loop).
  stack_.resize(frames.size());
  this_stack_.resize(frames.size());
  uint32_t* const locations = stack_.data();
  LastStacks::Frame* const kept = this_stack_.data();
  auto key_of = [&](size_t i, uint8_t position) {
    return RawFrameCache::Key{frames[i].ip, sample.pid, static_cast<uint8_t>(frames[i].cpumode), position};
  };
  // The cache slots of the frames that will be probed, loaded all at once. A frame's key holds
  // whether it follows a kernel frame, known for sure only once that frame is resolved: guessed
  // here from its address (a wrong guess costs one useless load).
  for (size_t i = 0; i < reuse_from; ++i) {
    const bool after_kernel_guess = i > 0 && (frames[i - 1].ip >> 48) == 0xffff;
    raw_frames_.Prefetch(key_of(i, PositionOf(!sample.call_chain || i == 0, after_kernel_guess)));
  }
  bool after_kernel = false;
  for (size_t i = 0; i < frames.size(); ++i) {
    const bool first = !sample.call_chain || i == 0;
    const uint8_t position = PositionOf(first, after_kernel);
    if (i >= reuse_from) {
      const size_t from = last.frames.size() - (frames.size() - i);
      const std::span<const LastStacks::Frame> reused(last.frames.data() + from, last.frames.size() - from);
      bool same = (reused.front().position & ~LastStacks::kReusable) == position;
      if (same) {
        for (const LastStacks::Frame& f : reused) {
          if ((f.flags & kRawTimed) == 0) continue;
          same = timed && last.has_epoch && epoch_now() == last.epoch;
          break;
        }
      }
      if (same) {
        for (size_t k = 0; k < reused.size(); ++k) {
          CountCached(reused[k].flags, jvm_index);
          locations[i + k] = reused[k].location;
          kept[i + k] = reused[k];
        }
        break;
      }
    }
    const RawFrameCache::Key key = key_of(i, position);
    RawFrameCache::Entry* e = raw_frames_.Find(key);
    bool trusted = e != nullptr && (!(e->flags & kRawJitArea) || e->jvm == jvm_index);
    if (trusted && (e->flags & kRawTimed)) trusted = timed && e->epoch == epoch_now();
    if (trusted && e->generation != generation) {
      trusted = mapper.Unchanged(frames[i], e->generation);
      if (trusted && generation <= UINT32_MAX) e->generation = static_cast<uint32_t>(generation);
    }
    if (trusted) {
      CountCached(e->flags, jvm_index);
      locations[i] = e->location;
      after_kernel = (e->flags & kRawKernel) != 0;
      kept[i] = LastStacks::Frame{frames[i].ip, e->location, frames[i].cpumode, e->flags,
                                  static_cast<uint8_t>(position | LastStacks::kReusable)};
      continue;
    }
    const StackFrame frame = mapper.Map(frames[i]);
    const Resolved r = Resolve(sample, frame, first, after_kernel, jvm);
    Count(r);
    locations[i] = r.location;
    after_kernel = r.kernel;
    if (r.timed && !epoch) epoch = r.hit.epoch;  // the sample's (Resolve asked the timeline)
    const uint8_t flags = static_cast<uint8_t>(
        (r.kernel ? kRawKernel : 0) | (r.jit_area ? kRawJitArea : 0) | (r.timed ? kRawTimed : 0) |
        (r.hit.counted ? kRawCounted : 0) | (r.hit.resolved ? kRawResolved : 0) |
        (r.hit.expanded ? kRawExpanded : 0) | (r.hit.before_load ? kRawBeforeLoad : 0) |
        (r.hit.time_resolved ? kRawTimeResolved : 0));
    kept[i] = LastStacks::Frame{frames[i].ip, r.location, frames[i].cpumode, flags,
                                static_cast<uint8_t>(position | (r.cacheable ? LastStacks::kReusable : 0))};
    // An entry keeps generations and epochs in 32 bits: past that, frames are not cached.
    if (!r.cacheable || generation > UINT32_MAX || r.hit.epoch > UINT32_MAX) continue;
    RawFrameCache::Entry& entry = raw_frames_.Insert(key);
    entry.location = r.location;
    entry.jvm = jvm_index;
    entry.generation = static_cast<uint32_t>(generation);
    entry.epoch = static_cast<uint32_t>(r.hit.epoch);
    entry.flags = flags;
  }
  last.tid = sample.tid;
  last.pid = sample.pid;
  last.jvm = jvm_index;
  last.generation = generation;
  last.has_epoch = epoch.has_value();
  last.epoch = epoch.value_or(0);
  last.frames.swap(this_stack_);
  Finish(sample, process);
}

void ProfileReader::Finish(const StackSample& sample, uint32_t process) {
  if (stack_.empty()) {
    // No ip at all: still a sample of this thread.
    static const StackFrame kNothing;
    stack_.push_back(NativeLocation(sample, kNothing, 0, false, false));
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

void ProfileReader::ReleaseReadState() {
  builder_.ReleaseIndexes();  // no location or stack is added from here on
  jvms_.clear();   // each Jvm and its share of a decoded dump
  dumps_.clear();
  jit_functions_.clear();  // its names were views into the dumps
  decltype(jit_lines_)().swap(jit_lines_);
  interpreted_locations_.clear();
  native_frames_.clear();
  jit_frames_.clear();
  decltype(jit_cache_)().swap(jit_cache_);
  raw_frames_.clear();
  last_stacks_.clear();
  decltype(this_stack_)().swap(this_stack_);
  decltype(mappings_)().swap(mappings_);
  process_ids_.clear();
  process_memo_ = ProcessMemo();
  marker_memo_.fill(MarkerMemo());
}

Profile ProfileReader::Take() {
  // The dumps, caches and indexes are freed (not only emptied) before the builder makes the
  // profile's samples, which then reuse that memory: fresh pages cost the kernel's zeroing (with
  // them kept, making the samples was the report's peak).
  NameNatives();
  return builder_.Take();
}

}  // namespace jitdump::report
