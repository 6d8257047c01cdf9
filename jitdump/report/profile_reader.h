// Builds a Profile from a recording's samples (stack_sample.h: read from perf.data, or from perf
// script's text) and the dumps of the JVMs in the recording: every JIT frame resolved by address
// and time to the load that covered it, and expanded into its inline chain; kernel and native
// frames keep perf script's symbols, or get theirs from the NativeSymbols given.
//
// Stacks: the first frame of a sample is where the CPU was (looked up at that address), and so
// is the first user-space frame after kernel frames (the interrupted user pc); every other frame
// is a return address, looked up one byte earlier, inside the call instruction, so an inlined
// call resolves to the inline chain of the call and not of the instruction after it. DWARF
// call chains (perf record --call-graph dwarf) arrive already adjusted by perf.
//
// Memory is bounded by what is distinct (functions, locations, stacks), never by the number of
// samples: the reader keeps no sample once it is counted.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitdump/report/flat_index.h"
#include "jitdump/report/interpreted_frames.h"
#include "jitdump/report/jit_function_memo.h"
#include "jitdump/report/jvm_code.h"
#include "jitdump/report/last_stacks.h"
#include "jitdump/report/perf_script.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile.h"
#include "jitdump/report/raw_frame_cache.h"
#include "jitdump/report/stack_sample.h"

namespace jitdump::report {

struct ReadOptions {
  // Directories holding dumps collected elsewhere (scripts/bin/collect, kubectl cp): see
  // dump_locator.h.
  std::vector<std::string> dump_dirs;
  // perf already moved return addresses onto the call instruction (DWARF unwinding does).
  bool return_addresses_adjusted = false;
  // Sample times are the dumps' clock (CLOCK_MONOTONIC: perf record -k 1). When not, every JIT
  // frame resolves to the code the dump leaves at its address.
  bool times_are_dump_clock = true;
  // Only samples of this event count; empty: the first event seen (others are counted in
  // ReadStats::skipped_events).
  std::string event;
  bool every_event = false;  // count the samples of every event instead
  // What the dumps may take in memory once decoded, in bytes (0: no limit). A dump that does not
  // fit is left out with a warning (its JIT frames stay unnamed).
  uint64_t dump_memory = 0;
};

struct ReadStats {
  uint64_t samples = 0;
  std::map<std::string, uint64_t> skipped_events;  // samples of other events, by event name
  uint64_t frames = 0;
  uint64_t jit_frames = 0;         // frames in JIT code of a process with a dump (a frame in no
                                   // mapping counts only when a load covers it)
  uint64_t jit_resolved = 0;       // of those, frames a load of the dump covers
  uint64_t jit_expanded = 0;       // of those, frames named from an inline record
  uint64_t jit_before_load = 0;    // resolved to a load stamped after the sample (late attach)
  uint64_t jit_time_resolved = 0;  // resolved to earlier code than the dump's final state there
  std::vector<std::string> warnings;  // dumps that could not be found or read, ...
  // Stacks walked for interpreted frames (samples with registers and stack bytes of JVMs whose
  // agent wrote a method table), and what the walks found.
  InterpretedWalkStats interpreted;
  uint64_t jvms_with_method_table = 0;
};

// A frame of a perf.data sample as the recording gives it, before it is placed in its
// process's mappings.
struct RawFrame {
  uint64_t ip = 0;
  uint16_t cpumode = 0;
};

// Places a raw sample's frames in its process's mappings (perf_data_source.cc), for the frames
// the reader has not seen before or can no longer trust (AddressSpaces' generations).
class FrameMapper {
 public:
  virtual ~FrameMapper() = default;
  virtual StackFrame Map(const RawFrame& frame) = 0;
  // What the sample's process's mappings are at; see AddressSpaces::FindGeneration.
  virtual uint64_t Generation() = 0;
  // Whether `frame` maps as it did at generation `since`; see AddressSpaces::Unchanged.
  virtual bool Unchanged(const RawFrame& frame, uint64_t since) = 0;
};

class ProfileReader final : public ScriptSink {
 public:
  // `processes` (the recording's markers) must outlive the reader.
  ProfileReader(const ProcessMap& processes, ReadOptions options);
  // One dump for every sample whatever its pid (`jitdump fold DUMP`).
  ProfileReader(std::unique_ptr<JvmCode> only_dump, ReadOptions options);
  ~ProfileReader() override;

  // A sample of perf script's text (its frames' DSOs interned here).
  void OnSample(const ScriptSample& sample) override;
  void OnEvent(const ScriptEvent&) override {}
  // A sample whose frames' DSOs are ids of dsos().
  void Add(const StackSample& sample);
  // A sample whose frames come raw (`sample.frames` is ignored): each is resolved from what
  // the same raw frame resolved to before, when nothing it depended on changed, else placed
  // by `mapper` and resolved as Add does. The same profile and statistics as Add.
  void AddRaw(const StackSample& sample, std::span<const RawFrame> frames, FrameMapper& mapper);
  DsoTable& dsos() { return dsos_; }
  // What the recording says about its call chains and clock, when it is known only once its
  // first samples come (a stream's events arrive with its records).
  void SetShape(bool return_addresses_adjusted, bool times_are_dump_clock) {
    options_.return_addresses_adjusted = return_addresses_adjusted;
    options_.times_are_dump_clock = times_are_dump_clock;
    raw_frames_.clear();  // resolved under the shape before
    last_stacks_.clear();
  }
  // Names the frames that come without a symbol (perf.data's); not owned, may be null.
  void set_native_symbols(NativeSymbols* symbols) { native_symbols_ = symbols; }
  // The interpreted-frame walker of the JVM that process `pid` runs at `time` (its dump and
  // method table loaded on first use); null when the process is no JVM, or its agent wrote no
  // method table. Valid as long as the reader.
  InterpretedFrames* InterpretedFor(uint32_t pid, std::optional<uint64_t> time);
  InterpretedWalkStats& interpreted_stats() { return stats_.interpreted; }
  bool times_are_dump_clock() const { return options_.times_are_dump_clock; }

  const ReadStats& stats() const { return stats_; }
  // After the last sample: frees the dumps and caches of the reading, then names the native
  // frames left to the NativeSymbols (NativeSymbols::NameDeferred), in that memory. Take() does
  // it when the caller has not; without NativeSymbols then, those frames are named after
  // their DSOs.
  void NameNatives();
  // The finished profile; the reader is left empty, its dumps and caches freed (stats() stays).
  Profile Take();

 private:
  struct Jvm;  // one marker's dump, loaded on first use
  // What resolving a JIT frame found, cached per (JVM, address) while the JVM's code map at
  // the samples' time stays the same (LoadTimeline::Epoch).
  struct JitFrame {
    uint64_t epoch = 0;
    uint32_t location = 0;
    bool resolved = false;       // a load covers it
    bool counted = true;         // it counts as a JIT frame (no: an unresolved frame in no mapping)
    bool expanded = false;       // from an inline record
    bool before_load = false;    // resolved to a load stamped after the sample
    bool time_resolved = false;  // to other code than the dump's final state there
  };

  Jvm* JvmFor(const StackSample& sample, int64_t* marker);
  // processes_->MarkerFor for the sample, remembered per pid for the stretch of time it holds.
  int64_t MarkerOf(const StackSample& sample);
  // The dump already read from the file now at `path`, if any.
  std::shared_ptr<JvmCode> CachedDump(const std::string& path) const;
  uint32_t ProcessFor(const StackSample& sample, int64_t marker, const Jvm* jvm);
  // What a frame resolved to, and what it depends on.
  struct Resolved {
    uint32_t location = 0;
    bool kernel = false;     // kernel code: the next frame is where the CPU was
    bool jit_area = false;   // valid only for the same JVM (none included)
    bool timed = false;      // valid only for the same epoch of the JVM's code map
    bool cacheable = true;   // false: resolved without a cache (no time, perf inject's ELFs)
    bool jit = false;        // resolved against a JVM's dump: `hit` counts
    JitFrame hit;
  };
  // The sample's prologue shared by Add and AddRaw: false when the sample does not count.
  bool Accept(const StackSample& sample);
  // `frame` of `sample`: the first of its stack (or its only ip) or not, after a kernel frame
  // or not (which say whether it is where the CPU was or a return address).
  Resolved Resolve(const StackSample& sample, const StackFrame& frame, bool first, bool after_kernel, Jvm* jvm);
  void Count(const Resolved& resolved);
  // A frame AddRaw resolved before, with the flags it kept (RawFlag), for JVM `jvm`.
  [[gnu::always_inline]] inline void CountCached(uint8_t flags, uint32_t jvm);
  void Finish(const StackSample& sample, uint32_t process);
  uint32_t JitLocation(Jvm& jvm, size_t record, uint64_t addr);
  uint32_t JitFunction(const JitLine& frame);
  uint32_t InterpretedLocation(Jvm& jvm, const StackFrame& frame);
  JitFrame ResolveJit(const StackSample& sample, const StackFrame& frame, uint64_t step, Jvm& jvm);
  // `frame` looked up at `step` bytes before its address (1 for a return address).
  uint32_t NativeLocation(const StackSample& sample, const StackFrame& frame, uint64_t step, bool kernel, bool jit_area);
  uint32_t MappingOf(uint32_t dso);
  // A native frame's one line when no symbol names it: perf script's symbol (`frame.named`),
  // else its DSO's name ("[libc.so.6]", "[unknown]").
  Line FallbackLine(const StackFrame& frame, const FrameDso& dso, bool kernel, bool jit_area);
  // Frees what only reading samples needs: dumps, caches, indexes.
  void ReleaseReadState();

  const ProcessMap* processes_ = nullptr;
  ReadOptions options_;
  ReadStats stats_;
  ProfileBuilder builder_;
  std::vector<std::unique_ptr<Jvm>> jvms_;  // by marker index (fold: one)
  // Dumps read so far by (device, inode): markers of one file (a JVM that re-execs itself maps
  // the same dump path again and again) share one decoded copy.
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<JvmCode>> dumps_;
  DumpBudget budget_;
  bool single_dump_ = false;
  std::map<std::pair<uint32_t, int64_t>, uint32_t> process_ids_;  // (pid, marker) -> process
  // MarkerOf's answers, a pid's in slot pid % size: samples come in time order, a few processes
  // at a time, and a stretch lasts from one marker, exit or exec of the process to the next.
  struct MarkerMemo {
    uint32_t pid = 0;
    uint64_t generation = UINT64_MAX;  // the process map's when asked; UINT64_MAX: empty
    ProcessMap::MarkerSpan span;
  };
  std::array<MarkerMemo, 16> marker_memo_;
  struct ProcessMemo {
    uint32_t pid = 0;
    int64_t marker = 0;
    uint32_t id = UINT32_MAX;  // UINT32_MAX: empty
  } process_memo_;  // ProcessFor's last answer
  JitFunctionMemo jit_functions_;      // JitLocation's functions
  std::vector<Line> jit_lines_;        // JitLocation's
  // Interpreted frames' locations by (method record, line).
  std::map<std::pair<const TableMethod*, uint32_t>, uint32_t> interpreted_locations_;
  FlatIndex native_frames_;            // (file address, dso) -> location
  FlatIndex jit_frames_;               // (address, jvm) -> index into jit_cache_
  RawFrameCache raw_frames_;           // AddRaw's frames
  LastStacks last_stacks_;             // AddRaw's last stack of each thread
  std::vector<LastStacks::Frame> this_stack_;  // the sample AddRaw resolves, becoming its thread's last
  std::vector<JitFrame> jit_cache_;
  std::unordered_map<uint32_t, uint32_t> mappings_;  // dso id -> profile mapping
  DsoTable dsos_;
  NativeSymbols* native_symbols_ = nullptr;
  // Native frames deferred to NativeSymbols, by ticket: their unnamed locations and what names
  // them when the symbols do not.
  struct UnnamedNative {
    uint32_t location;
    uint32_t dso;
    bool kernel;
    bool jit_area;
  };
  std::vector<UnnamedNative> unnamed_natives_;
  std::vector<StackFrame> script_frames_;  // a text sample's frames, converted
  std::vector<uint32_t> stack_;  // the sample being built, leaf first
  bool time_based_ = false;      // the event's period is nanoseconds of CPU time
};

}  // namespace jitdump::report
