// A method table (method_table_format.h) as the read half hands it out: decoded to host byte
// order, with an index that answers "which method was at this Method* at this time" and "which
// line is this bytecode index". The bytes come from whoever owns the JVM, so nothing in them is
// trusted: every size is checked against the record and the file, a record that does not fit
// is reported (with its offset) and skipped, and a table cut short (a killed JVM) gives every
// whole record before the cut.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "jitdump/format/method_table_format.h"
#include "jitdump/read/problem.h"

namespace jitdump {

struct TableLayout {
  uint64_t timestamp = 0;
  uint32_t elf_machine = 0;
  uint32_t jvm_feature = 0;
  uint32_t word_size = 8;
  int32_t method_slot = 0;
  int32_t bcp_slot = 0;
  int32_t complete_slot = 0;
  uint32_t bcp_register = 0;
  uint32_t method_register = 0;
  std::string jvm_version;
};

struct TableClass {
  uint64_t class_id = 0;
  std::string name;  // "java.util.HashMap"
  std::string file;  // "java/util/HashMap.java"; empty when the class has none
};

struct TableMethod {
  uint64_t timestamp = 0;
  uint64_t retired = UINT64_MAX;  // when a RETIRE ended it; UINT64_MAX: never
  uint64_t serial = 0;
  uint64_t method = 0;  // the Method*
  uint64_t code_base = 0;
  uint32_t code_size = 0;
  uint32_t flags = 0;
  uint32_t klass = UINT32_MAX;  // index into MethodTable::classes; UINT32_MAX: an unknown class id
  std::string name;
  std::string descriptor;
  std::vector<MethodTableLine> lines;  // sorted by bci

  bool native() const { return (flags & kMethodNative) != 0; }
  // Whether `bcp` points into this method's bytecodes.
  bool Contains(uint64_t bcp) const { return bcp >= code_base && bcp - code_base < code_size; }
  // The source line of bytecode index `bci`: the entry with the largest start <= bci (the first
  // entry's line before it); 0 when the method has no line table.
  uint32_t LineAt(uint64_t bci) const;
};

class MethodTable {
 public:
  bool header_ok = false;  // false: not a method table at all (see problems)
  bool cross_endian = false;
  MethodTableHeader header{};  // host byte order
  std::optional<TableLayout> layout;
  std::vector<TableClass> classes;
  std::vector<TableMethod> methods;  // in file order
  bool ended = false;                // the END record was read: the producer closed the table
  MethodTableCounts end_counts;      // what END says (when ended)
  // A final record cut short (what a killed process leaves): its offset.
  std::optional<uint64_t> truncated_offset;
  std::vector<Problem> problems;

  // The method at `method` (a Method*) at `time`: of the records for it stamped at or before
  // `time`, the latest, unless retired by then (then none). A null `time` (a recording in
  // another clock) takes the latest record. Null when none.
  const TableMethod* Find(uint64_t method, std::optional<uint64_t> time) const;
  // The class of `m`, or null.
  const TableClass* ClassOf(const TableMethod& m) const {
    return m.klass < classes.size() ? &classes[m.klass] : nullptr;
  }
  // Whether `method` is in the table at all (at any time).
  bool Knows(uint64_t method) const { return by_method_.count(method) != 0; }

  // Builds the index Find uses (the decoder calls it).
  void Index();

 private:
  // Per Method*: the indexes into `methods` of its records, by timestamp (then serial).
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_method_;
};

// Decodes a whole table. Never fails: what cannot be read is in `problems`, what can is kept.
MethodTable ParseMethodTable(std::span<const uint8_t> bytes);

// Reads and decodes the table at `path` as a file its owner controls (untrusted_file.h: no
// symlink followed, nothing but a regular file, never blocking; at most `max_bytes`: a larger
// one is refused unread). False, with `error`, when it cannot be read;
// a file that is there but damaged decodes as far as it goes (problems).
bool LoadMethodTable(const std::string& path, uint64_t max_bytes, MethodTable* table, std::string* error);

// "jit-1234.dump" -> "jit-1234.dump.methods".
std::string MethodTablePathFor(const std::string& dump_path);

}  // namespace jitdump
