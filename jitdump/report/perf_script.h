// The text `perf script` prints, parsed: samples (a header line, then the call chain as indented
// frame lines, or the sampled ip on the header line itself when there is no call chain) and
// the side-band events `--show-mmap-events --show-task-events` add (MMAP/MMAP2, COMM,
// FORK, EXIT). This is the only code outside perf that reads perf script's text.
//
// `jitdump report` runs perf script with a fixed field list (kScriptFields); the parser also
// takes perf script's default output and the shapes `jitdump fold` documents, because users
// pipe those in. What it relies on, from perf 6.1's builtin-script.c and util/event.c:
//   header:  COMM PID[/TID] [[CPU]] SECONDS.FRACTION: [PERIOD] [EVENT:] [IP SYM (DSO)]
//            COMM may hold spaces (thread names such as "C2 CompilerThre") and is padded on
//            the left when the sample has no call chain;
//   frame:   <tab or spaces>IP SYM[+0xOFF] (DSO)
//            IP is hexadecimal: absolute for kernel code and for code perf has no file for
//            (anonymous memory, JIT code, perf maps), the offset into the file (perf's map_ip)
//            for a file-backed DSO inside a call chain;
//   events:  <header prefix> PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF ...]: PROT PATH
//            <header prefix> PERF_RECORD_COMM[ exec]: COMM:PID/TID
//            <header prefix> PERF_RECORD_FORK(PID:TID):(PPID:PTID)   (and _EXIT)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::report {

// The fields `jitdump report` asks perf script for (plus --ns and --no-inline).
inline constexpr const char* kScriptFields = "comm,pid,tid,time,period,event,ip,sym,dso";

struct ScriptFrame {
  uint64_t addr = 0;
  std::string sym;  // without "+0xOFF"; "[unknown]" when perf knows no symbol; may be empty
  std::string dso;  // without the parentheses; empty when perf printed none
};

struct ScriptSample {
  std::string comm;  // perf's comm of the sampled thread
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::optional<uint64_t> time_ns;  // perf's sample time, when printed
  uint64_t period = 0;              // 0 when not printed
  std::string event;                // "cpu-clock"; empty when not printed
  std::vector<ScriptFrame> frames;  // innermost first
  // True when the frames are a call chain (indented lines); false for the single sampled ip
  // printed on the header line (a recording without -g).
  bool call_chain = false;
};

enum class ScriptEventKind { kMmap, kComm, kFork, kExit };

struct ScriptEvent {
  ScriptEventKind kind = ScriptEventKind::kMmap;
  std::optional<uint64_t> time_ns;  // perf's time of the event (0 for events perf synthesized)
  // The event's own pid/tid (for FORK and EXIT the child's, for MMAP the mapping process's).
  int64_t pid = -1;
  int64_t tid = -1;
  // kMmap
  uint64_t start = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  std::string prot;  // "r-xp" (MMAP2) or "x" (MMAP)
  std::string path;
  // kComm
  std::string comm;
  bool exec = false;
  // kFork, kExit
  int64_t ppid = -1;
  int64_t ptid = -1;
};

// "7f12ab" or "0x7f12ab", at most 64 bits (perf script's ips; addr2line's ADDR).
bool ParseHex(std::string_view text, uint64_t* value);

// "12345.678901:" (perf script's time field, any number of fraction digits up to 9) ->
// nanoseconds.
bool ParseSampleTime(std::string_view token, uint64_t* ns);

// One frame line ("\t7f12ab sym+0x10 (/tmp/perf-1.map)"), leading whitespace allowed.
bool ParseFrameLine(std::string_view line, ScriptFrame* frame);

// One side-band event line; false when `line` is not one this parser knows.
bool ParseEventLine(std::string_view line, ScriptEvent* event);

// Receives what ScriptParser finds, in input order.
class ScriptSink {
 public:
  virtual ~ScriptSink() = default;
  virtual void OnSample(const ScriptSample& sample) = 0;
  virtual void OnEvent(const ScriptEvent& event) = 0;
};

// Streaming: feed perf script's output line by line (without the newline). A sample is
// complete at a blank line, at the next header or event, or at Finish().
class ScriptParser {
 public:
  explicit ScriptParser(ScriptSink& sink) : sink_(sink) {}
  void Feed(std::string_view line);
  void Finish();
  // Lines that were neither a sample header, a frame of one, an event nor blank.
  uint64_t unrecognized_lines() const { return unrecognized_lines_; }

 private:
  void Flush();
  bool ParseHeader(std::string_view line);

  ScriptSink& sink_;
  ScriptSample sample_;
  std::vector<ScriptFrame> spare_;
  size_t frame_count_ = 0;  // frames of sample_ in use (the vector keeps its strings' capacity)
  bool active_ = false;
  bool header_frame_ = false;  // the frame came from the header line, a chain replaces it
  uint64_t unrecognized_lines_ = 0;
};

}  // namespace jitdump::report
