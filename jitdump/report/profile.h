// A symbolized CPU profile: what `jitdump report` builds from a perf recording and the dumps of
// the JVMs in it, and what every output (folded stacks, the HTML flame graph, pprof, the per-line
// table, the JSON summary) is written from. It follows pprof's profile.proto model, so the pprof
// writer is a direct translation: a Location is one address with its whole inline chain, a
// Sample a stack of Locations with a count. Everything is interned: a recording of millions of
// samples holds each distinct function, location and stack once.
//
// No perf, no files, no JVMTI here: plain data and the interning that keeps it small.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/report/stack_table.h"

namespace jitdump::report {

// What a frame is. Java frames come from the dumps; the others from perf's own symbols.
enum class FrameKind : uint8_t {
  kCompiled,     // a compiled Java method (the outermost frame of a JIT code load)
  kInlined,      // a Java method inlined into a compiled one (an inner frame of the inline chain)
  kInterpreted,  // HotSpot's template interpreter (the "Interpreter" blob)
  kStub,         // other JIT-area code that is not a Java method: stubs, adapters, vtable stubs
  kNative,       // user-space code outside the JIT area: libjvm, libc, JNI libraries
  kKernel,       // kernel code
  kUnknown,      // an address nothing describes
};

// Short stable spelling for JSON and HTML ("compiled", "inlined", "interpreted", "stub",
// "native", "kernel", "unknown").
const char* FrameKindName(FrameKind kind);

struct Function {
  std::string name;  // "java.util.HashMap.getNode(int, java.lang.Object)", "Interpreter", "memcpy"
  std::string file;  // "java/util/HashMap.java"; empty when unknown
  FrameKind kind = FrameKind::kUnknown;
};

// One frame of an inline chain.
struct Line {
  uint32_t function = 0;  // index into Profile::functions
  uint32_t line = 0;      // source line; 0 when unknown
};

// Where a Location's address lies: a DSO, the kernel, or one JVM's JIT area.
struct Mapping {
  std::string file;  // "/usr/lib/jvm/.../libjvm.so", "[kernel.kallsyms]", "[jit] jit-1234.dump"
  uint64_t start = 0;
  uint64_t limit = 0;
  uint64_t offset = 0;
};

// One code address and its inline chain. lines[0] is the innermost frame (the code that was
// executing there, or the call instruction's inlined callee chain), lines.back() the function
// that owns the code. For a caller frame of a stack, `address` is the return address minus
// one (the call instruction), which is where its inline chain was looked up.
struct Location {
  uint64_t address = 0;
  uint32_t mapping = 0;  // index into Profile::mappings; 0 is "no mapping" (an empty Mapping)
  std::vector<Line> lines;
};

// Identical stacks of one thread kind are merged: `count` samples, `nanos` of CPU time.
struct Sample {
  std::vector<uint32_t> locations;  // indexes into Profile::locations, leaf first
  uint32_t process = 0;             // index into Profile::processes
  uint32_t thread = 0;              // index into Profile::threads
  uint64_t count = 0;
  uint64_t nanos = 0;
};

// One process of the recording; for a JVM, the dump that named its code.
struct Process {
  uint32_t pid = 0;
  std::string command;  // perf's comm of the process's main thread
  std::string dump;     // path of its jit-<pid>.dump; empty for a process without one
  // The pid the JVM itself saw, which names its files (jit-<dump_pid>.dump, the agent's stats
  // with %p): `pid` inside a container's pid namespace differs from it. 0 without a dump.
  uint32_t dump_pid = 0;
  // The program the process ran (its executable's path as mapped); empty when the recording
  // does not say. pprof's header names it.
  std::string executable;
};

struct Profile {
  std::vector<Function> functions;
  std::vector<Mapping> mappings{Mapping{}};  // mappings[0]: "no mapping"
  std::vector<Location> locations;
  std::vector<Sample> samples;
  std::vector<Process> processes;
  // The samples' thread names (perf's comm of the sampled thread), each once; "" when unknown.
  std::vector<std::string> threads;
  uint64_t period_ns = 0;      // nanoseconds per sample (cpu-clock period); 0 when unknown
  uint64_t start_ns = 0;       // perf's time of the first and last sample
  uint64_t end_ns = 0;
};

// Builds a Profile with every function, mapping, location and stack interned.
class ProfileBuilder {
 public:
  uint32_t AddFunction(std::string_view name, std::string_view file, FrameKind kind);
  uint32_t AddMapping(std::string_view file, uint64_t start, uint64_t limit, uint64_t offset);
  // `lines` innermost first, as Location::lines. Equal (address, mapping, lines) share an index.
  uint32_t AddLocation(uint64_t address, uint32_t mapping, const std::vector<Line>& lines);
  // A location whose lines come later (SetLines), never shared: the caller makes one per
  // (address, mapping) it has not named yet.
  uint32_t AddUnnamedLocation(uint64_t address, uint32_t mapping);
  void SetLines(uint32_t location, std::span<const Line> lines) {
    profile_.locations[location].lines.assign(lines.begin(), lines.end());
  }
  uint32_t AddProcess(uint32_t pid, std::string_view command, std::string_view dump);
  // Adds `count` samples of this stack (leaf first) to the matching Sample, or a new one.
  void AddSample(const std::vector<uint32_t>& locations, uint32_t process, std::string_view thread,
                 uint64_t count, uint64_t nanos);

  // Frees what finds a location or a stack again (the interning slots of locations, the stack
  // table's: 2 MB on the HttpLoad bench recording), once the last sample is in: memory the
  // naming of native frames (a large library's symbols, libc's DWARF) then takes over, where it
  // needed new memory before. AddLocation and AddSample throw after it.
  void ReleaseIndexes();

  // The profile being built, but for its samples: Take() makes them.
  Profile& profile() { return profile_; }
  // The finished profile, its samples in the order of their paths (SamplesByPath's, which finds
  // them so and keeps it); the builder is left empty.
  Profile Take();

 private:
  // Open addressing over item indexes, each slot with the item's hash: an item already seen
  // costs a hash and one comparison, no allocation (functions and locations are interned once
  // per distinct frame of a recording). The low 32 bits of the hash are kept, which pick the
  // slot in any table that fits in memory: 8 bytes a slot (the locations' table was 2 MB).
  struct Slot {
    uint32_t hash = 0;
    uint32_t index = UINT32_MAX;  // UINT32_MAX: empty
  };
  template <typename Equal>
  static uint32_t Intern(std::vector<Slot>& slots, size_t count, uint64_t hash, bool* inserted, Equal equal);

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  uint32_t ThreadId(std::string_view thread);

  Profile profile_;
  std::vector<Slot> function_slots_;
  std::unordered_map<std::string, uint32_t> mapping_ids_;
  std::vector<Slot> location_slots_;
  bool indexes_released_ = false;
  // The distinct (process, thread, stack)s while the profile is built, the thread an index into
  // thread_names_. Profile::samples, a vector and a string each, are made once in Take().
  StackTable stacks_;
  std::vector<std::string> thread_names_;
  // ThreadId's answers by where the name's bytes were: a sample's thread name is a view of the
  // same string sample after sample (perf.data's comm of that thread), so a repeated name costs
  // a comparison instead of hashing it; threads that interleave keep their own entries.
  struct ThreadMemo {
    const char* data = nullptr;
    uint32_t id = 0;
  };
  std::array<ThreadMemo, 256> thread_memo_{};
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> thread_ids_;
};

}  // namespace jitdump::report
