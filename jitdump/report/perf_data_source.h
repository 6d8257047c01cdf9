// A perf.data recording as the report reads it, through the perf.data reader (jitdump/perfdata/),
// with no perf binary: the recording's shape (clock, DWARF call chains), one pass over the
// side-band records (where each JVM's agent mapped its dump, exits, execs) into the ProcessMap,
// then the samples, each frame with the mapping and DSO name perf would give it
// (perfdata/address_spaces.h) and the thread's comm, to the ProfileReader.
//
// A stream (`perf record -o - | jitdump report -`) is read once: its side-band records go to
// the ProcessMap as they come, so a dump mapped after a JVM's first samples (a late attach)
// names only the samples after it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jitdump/perfdata/reader.h"
#include "jitdump/report/process_map.h"
#include "jitdump/report/profile_reader.h"
#include "jitdump/report/recording_shape.h"
#include "jitdump/symbols/symbolizer.h"

namespace jitdump::report {

class SymbolizedNames;

class PerfDataSource {
 public:
  // `path` "-": standard input. Null with `error` when it is no perf.data recording.
  static std::unique_ptr<PerfDataSource> Open(const std::string& path, std::string* error);

  // The events and clock, from the attrs (a stream's are known only after ReadSamples).
  RecordingShape Shape() const;
  bool rereadable() const { return reader_->rereadable(); }

  // Pass 1 (a file only): every MMAP, COMM, FORK and EXIT into `processes`.
  void ReadSideBand(ProcessMap& processes);
  ~PerfDataSource();

  // Whether ReadSamples names native and kernel frames (jitdump/symbols: ELF, DWARF, kallsyms,
  // no perf); off, they are named after their DSO. On by default.
  void set_symbolize(bool on) { symbolize_ = on; }
  // Every sample to `reader`. For a stream, `processes` also receives the side-band records
  // (for a file, pass null: ReadSideBand has given them).
  void ReadSamples(ProfileReader& reader, ProcessMap* processes);

  const perfdata::Recording& recording() const { return reader_->recording(); }
  const perfdata::ReadStats& stats() const { return reader_->stats(); }
  std::vector<std::string> warnings() const { return reader_->warnings(); }
  // The files the samples' native and kernel frames were named from (after ReadSamples).
  std::vector<symbols::FileReport> SymbolFiles() const;

 private:
  explicit PerfDataSource(std::unique_ptr<perfdata::PerfDataReader> reader);
  std::unique_ptr<perfdata::PerfDataReader> reader_;
  bool symbolize_ = true;
  std::unique_ptr<SymbolizedNames> names_;
};

// The shape of a recording from its events (exposed for the tests).
RecordingShape ShapeOf(const perfdata::Recording& recording);

}  // namespace jitdump::report
