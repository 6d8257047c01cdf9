// The writer thread's method table (jitdump/format/method_table_format.h): DUMP.methods beside the
// dump, naming every method that can run interpreted by its Method*, so that `jitdump report`
// can name HotSpot's interpreted frames in perf's stack copies.
//
//  - Each class the JVM prepares (ClassPrepare, handed over pinned) and, once, every class
//    already prepared when the table starts, is described by the MethodSource (the JVM's side:
//    jvm_method_source.h) and written as a CLASS and its METHODs. A prepared class's methods
//    cannot have run before its ClassPrepare, so its records carry that event's timestamp;
//    classes that were there before the table carry 0 ("since before").
//  - HotSpot reuses a Method*'s memory once its class is unloaded, and a redefinition gives a
//    method a new Method* (the old one runs on while frames hold it). So the writer keeps, for
//    every Method* it wrote, the method id it came from, and a sweep every few seconds asks
//    where each id points now: nowhere (its class was unloaded: the record is RETIREd) or
//    elsewhere (redefined: the class is described again and each method whose Method* is new
//    is written, stamped back to the sweep before, the old version's record or the last record
//    at its address, whichever is latest, as it cannot be older than any of them; a
//    redefinition may also add methods, or leave a method's id where it was: JFR's
//    instrumentation of FileChannelImpl does both). A sweep reads one word per tracked method (a
//    cache miss each: ~3 ms for javac's 26,000 methods), so a sweep that finds nothing doubles
//    the interval to the next, from 2 s up to 64 s; one that finds a change returns to 2 s. One
//    last sweep runs when the writer detaches from the JVM (VM death, a stop), so a redefinition
//    after the last periodic sweep (JFR instruments classes when a recording starts) is written
//    too.
//
// Memory: one entry per tracked Method* (kMaxTracked at most; beyond, methods are still written
// but not swept), and the records not yet appended. Plain C++: method ids and class pins are
// opaque here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/core/code_event.h"
#include "agent/core/interpreter_layout.h"
#include "agent/core/stats.h"
#include "jitdump/write/method_table_file.h"
#include "jitdump/write/safe_file.h"

namespace jitdump_agent {

// One class as the JVM describes it.
struct ClassMethods {
  std::string name;  // "java.util.HashMap"
  std::string file;  // "java/util/HashMap.java"; empty when none
  struct Method {
    MethodId id = 0;
    uint64_t method = 0;     // its Method*
    uint64_t code_base = 0;  // its first bytecode
    uint32_t code_size = 0;
    bool native = false;
    std::string name;
    std::string descriptor;
    std::vector<jitdump::MethodTableLine> lines;  // sorted by bci
  };
  std::vector<Method> methods;  // those whose Method* could be read
  uint64_t unreadable = 0;      // methods whose Method* or bytecodes could not be read
};

// The JVM's side, on the writer thread while it is attached to the JVM.
class MethodSource {
 public:
  // The class a ClassPrepare callback pinned; releases the pin whatever happens. false when
  // nothing could be read (counted by the caller).
  virtual bool DescribePinned(ClassPin pin, ClassMethods* out) = 0;
  // Every class prepared now (the table's start), one at a time.
  virtual void DescribeLoaded(const std::function<void(const ClassMethods&)>& each) = 0;
  // Where a method id points now: its Method*, or 0 (the class was unloaded).
  virtual uint64_t CurrentMethod(MethodId id) = 0;
  // The class that declares the method an id names now, as it is now (after a redefinition:
  // every method and its current Method*, those the redefinition added too); false when it
  // cannot be described.
  virtual bool DescribeClassOf(MethodId id, ClassMethods* out) = 0;
  // Whether what the source read has shown that it cannot read this JVM's methods right (the
  // table is then closed: a table that names frames wrongly is worse than none).
  virtual bool refuted() const { return false; }

 protected:
  ~MethodSource() = default;
};

class MethodTableWriter {
 public:
  static constexpr size_t kMaxTracked = 1u << 20;
  static constexpr uint64_t kSweepIntervalNs = 2'000'000'000;      // 2 s after a change
  static constexpr uint64_t kMaxSweepIntervalNs = 64'000'000'000;  // at most, when nothing changes

  explicit MethodTableWriter(Stats& stats) : stats_(stats) {}
  MethodTableWriter(const MethodTableWriter&) = delete;
  MethodTableWriter& operator=(const MethodTableWriter&) = delete;

  // Creates `name` (DUMP.methods) in `dir` and writes its LAYOUT. False when it cannot (the
  // status says why; the agent goes on without it).
  jitdump::Status Open(const jitdump::HeldDirectory& dir, const std::string& name, const jitdump::CreateRules& rules,
                       uint32_t pid, uint64_t now, const InterpreterLayout& layout, std::string_view jvm_version);
  bool is_open() const { return file_.is_open(); }
  const std::string& path() const { return file_.path(); }

  // A class prepared at `timestamp` (0: before the table began).
  void AddClass(uint64_t timestamp, const ClassMethods& klass);
  // Every tracked method id checked against its Method* (see above). `now` stamps retirements;
  // new Method*s of redefined methods are stamped with the previous sweep's time.
  void Sweep(uint64_t now, MethodSource& source);
  // Whether a sweep is due at `now`.
  bool SweepDue(uint64_t now) const { return now - last_sweep_ >= sweep_interval_; }
  // Appends what was encoded since the last Flush (all of it or, on a failed write, nothing:
  // those methods are counted lost and the table stays whole).
  jitdump::Status Flush();
  // Flushes, writes END and closes.
  jitdump::Status Close(uint64_t now);
  // Closes and removes the file (the dump beside it was abandoned).
  void Discard();

  size_t tracked() const { return tracked_.size(); }

 private:
  struct Tracked {
    MethodId id;
    uint64_t serial;
    uint64_t timestamp;  // of its record
  };
  // Writes one method (and its class, once); false when it could not be encoded.
  bool Write(uint64_t timestamp, const ClassMethods& klass, const ClassMethods::Method& m, uint32_t flags,
             uint64_t* class_id);

  Stats& stats_;
  jitdump::MethodTableFile file_;
  std::vector<uint8_t> pending_;      // whole records not yet appended
  uint64_t pending_methods_ = 0;      // METHOD records in pending_
  std::unordered_map<uint64_t, Tracked> tracked_;  // by Method*
  uint64_t next_serial_ = 1;
  uint64_t next_class_ = 1;
  uint64_t last_sweep_ = 0;
  uint64_t sweep_interval_ = kSweepIntervalNs;
  jitdump::MethodTableCounts counts_;  // what was written, for END
};

}  // namespace jitdump_agent
