// From HotSpot's PcDescs to jitdump line rows. Pure: no JVMTI, unit-tested on its own.
//
// HotSpot semantics (docs/agent.md, "What it records"; HotSpot's create_inline_record in
// prims/jvmtiExport.cpp builds compile_info): compile_info lists PcDescs in ascending pc order,
// and a PcDesc's pc marks the END of the instruction run it describes (non-safepoint descs are
// recorded after an instruction is emitted, opto/output.cpp; call descs are return addresses).
// HotSpot itself matches a pc X to the desc with prev.pc < X <= this.pc (nmethod.cpp,
// pc_desc_near).
// DWARF-style rows apply from their address to the next row, so the row for desc i starts at
// desc i-1's pc (or the code start) and carries desc i's line. perf's own agent starts it at
// desc i's pc, one range late.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace jitdump_agent {

// 8 bytes: a method's bytecode is shorter than 64 KiB (JVMS 4.7.3), and the writer keeps a line
// table per cached method.
struct LineNumber {
  int32_t start_bci;
  int32_t line;
};

// A method's LineNumberTable, sorted by bci (JVMTI returns class-file order, not sorted).
class LineTable {
 public:
  LineTable() = default;
  explicit LineTable(std::vector<LineNumber> entries);

  bool empty() const { return entries_.empty(); }
  // The line of the last entry whose start_bci <= bci. A negative bci (method entry,
  // synchronization, unwind: HotSpot's -1/-2/-3) or one before the first entry maps to the
  // first line of the method. 0 when the table is empty.
  int32_t LineAt(int64_t bci) const;
  // The line at the lowest bci: where the method starts executing (with javac, the first
  // statement; not necessarily the smallest line number). 0 when empty.
  int32_t FirstLine() const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<LineNumber> entries_;
};

// What the line mapping needs to know about one method.
struct MethodLines {
  std::string function;  // "java.util.HashMap.getNode": how inline frames name the method
  std::string file;      // "java/util/HashMap.java"; empty when the class has no SourceFile
  LineTable lines;
  bool has_lines() const { return !file.empty() && !lines.empty(); }
};

struct Frame {
  const MethodLines* method = nullptr;  // may be null when a lookup failed
  int64_t bci = 0;
};

// One PcDesc: its pc and its scope chain, innermost (the leaf that was executing) first,
// the compiled root method last.
struct PcSite {
  uint64_t pc = 0;
  std::span<const Frame> frames;
};

struct LineRow {
  uint64_t addr = 0;
  const std::string* file = nullptr;
  int32_t line = 0;
};

// Rows sorted by address, every address in [code_start, code_end), consecutive rows with the
// same file and line merged. The line for a range is taken from the innermost frame that has
// line information (a lambda body or hidden-class frame without a table falls back to its
// caller's line). Ranges whose chain has no line information get no row of their own.
//
// With `closing_row`, one more row at the end of the last described range repeats the last
// line (its address may equal code_end). perf 6.1's genelf ends the DWARF line sequence at the
// last entry's address, so without it the last real row would cover no instructions.
std::vector<LineRow> BuildLineRows(uint64_t code_start, uint64_t code_end, std::span<const PcSite> sites,
                                   bool closing_row = false);
// The same into `rows` (cleared first), so a callback can reuse one vector's capacity.
void BuildLineRows(uint64_t code_start, uint64_t code_end, std::span<const PcSite> sites, bool closing_row,
                   std::vector<LineRow>& rows);

}  // namespace jitdump_agent
