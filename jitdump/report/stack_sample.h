// One sample as the profile reader takes it, whatever it was read from: perf.data through the
// perf.data reader (jitdump/perfdata/), or the text `perf script` prints (perf_script.h, what
// `jitdump fold` reads). The thread, the time, and the frames innermost first, each with the
// DSO perf names for its address, interned once per distinct name so that a frame costs no
// string.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitdump::perfdata {
struct Mapping;
}
namespace jitdump {
struct TableMethod;
struct TableClass;
}

namespace jitdump::report {

// What a DSO name says about the code in it (classify.h's rules, decided once per name).
struct FrameDso {
  std::string name;            // as perf names it: "/usr/lib/libc.so.6", "[kernel.kallsyms]", "/tmp/perf-1.map"
  bool none = false;           // no DSO at all: "" or perf's "[unknown]"
  bool kernel = false;         // the kernel or a module
  bool jit_candidate = false;  // where JIT code lives: anonymous memory, a perf map, a jitted-*.so, none
  bool jitted_elf = false;     // a jitted-<pid>-<index>.so of `perf inject --jit`
  uint64_t jitted_index = 0;
};

class DsoTable {
 public:
  DsoTable();
  // The id of `name` ("" is id 0, no DSO).
  uint32_t Intern(std::string_view name);
  const FrameDso& operator[](uint32_t id) const { return *dsos_[id]; }

 private:
  std::vector<std::unique_ptr<FrameDso>> dsos_;
  std::unordered_map<std::string_view, uint32_t> ids_;  // keys point into dsos_' names
};

struct StackFrame {
  // The address: absolute from perf.data; from perf script's text, what it printed (the offset
  // into the file for a file-backed DSO inside a call chain).
  uint64_t addr = 0;
  // The same address as an offset into the DSO's file (perf's map_ip); `addr` when the code is
  // not file-backed (the kernel, anonymous memory) or the source does not know.
  uint64_t file_addr = 0;
  uint32_t dso = 0;  // DsoTable id
  // The symbol perf script printed, when `named`; otherwise the reader's NativeSymbols finds it.
  std::string_view sym;
  bool named = false;
  // From perf.data: the mapping the address lies in (for NativeSymbols); null otherwise.
  const perfdata::Mapping* mapping = nullptr;
  // An interpreted Java frame the walk of the copied stack named (interpreted_frames.h): its
  // method and class in the JVM's method table and its line (0: unknown); `addr` is the
  // interpreter's pc (a return address already moved onto its call).
  const TableMethod* interpreted = nullptr;
  const TableClass* interpreted_class = nullptr;
  uint32_t interpreted_line = 0;
  int64_t interpreted_bci = -1;
};

struct StackSample {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::optional<uint64_t> time_ns;
  uint64_t period = 0;
  std::string_view comm;   // the sampled thread's name
  std::string_view event;  // "cpu-clock"; empty when unknown
  std::span<const StackFrame> frames;  // innermost first
  // True when the frames are a call chain; false for a sample's single ip (no -g).
  bool call_chain = false;
};

// Names native and kernel code the source gave no name for (perf.data frames). The report
// plugs a symbolizer in here; without one such frames are named after their DSO.
// Views into the symbolizer's strings, valid while NameDeferred's callback runs (no copy of
// each name: tens of thousands of distinct native addresses are named in a report).
struct NativeName {
  std::string_view function;
  std::string_view file;  // source file, when debug info says
  uint32_t line = 0;
};

// The reader hands its frames over as they come (Defer) and names them after the last sample
// (NameDeferred): a recording file's names are then looked up file by file, each file's symbol
// tables and DWARF freed before the next file's are read, where names looked up as samples came
// held every file's at once, at the report's peak of memory.
class NativeSymbols {
 public:
  virtual ~NativeSymbols() = default;
  // Takes a frame (`pid`: the sampled process) to name later under `ticket`; false when nothing
  // can name it (no file-backed or kernel mapping): the caller names it after its DSO now.
  virtual bool Defer(uint32_t pid, const StackFrame& frame, const FrameDso& dso, uint32_t ticket) = 0;
  // Calls each(ticket, names) once for every frame deferred since the last call: the names at
  // its address, innermost first (inlined functions before the function that holds them), empty
  // when nothing names it. The names are valid during the call.
  virtual void NameDeferred(const std::function<void(uint32_t, std::span<const NativeName>)>& each) = 0;
};

}  // namespace jitdump::report
