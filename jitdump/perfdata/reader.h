// Reads a perf.data recording, streaming: a file (`perf record -o perf.data`, also `-z`, also
// what `perf inject` writes) or a stream (`perf record -o - | ...`, or such a stream saved to a
// file). Records go to a RecordSink in time order (FINISHED_ROUND merging, round_sorter.h),
// each decoded with its own event's sample_type and read_format; COMPRESSED records are
// decompressed through one zstd stream. Memory is the read window, the records of two rounds
// (bounded by ReadOptions::sort_budget) and the recording's description, never the number of
// records.
//
// Hostile input: every length is checked before use, so a truncated or damaged file gives
// every record up to the damage, then stops with one warning that says where (the byte offset
// in the file). Nothing a file says makes the reader allocate more than a stated cap (events,
// ids, feature sections, decompressed bytes per record), loop without consuming input, or
// fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jitdump/perfdata/recording.h"
#include "jitdump/perfdata/records.h"

namespace jitdump::perfdata {

// Receives records in time order. Every argument is valid during the call only.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void OnSample(const Sample&) {}
  virtual void OnMmap(const Mmap&) {}
  virtual void OnComm(const Comm&) {}
  virtual void OnTask(const Task&) {}  // FORK and EXIT
  virtual void OnLost(const Lost&) {}
  virtual void OnThrottle(const Throttle&) {}
  // Any other record (only with ReadOptions::other_records).
  virtual void OnOther(const RawRecord&) {}
};

struct ReadOptions {
  // False: SAMPLE records are dropped unparsed (a pass over the side-band records only).
  bool samples = true;
  // True: records of types without a struct here go to OnOther.
  bool other_records = false;
  // Bytes of records waiting to be put in order before the oldest half goes out regardless.
  size_t sort_budget = 32u << 20;
};

struct ReadStats {
  uint64_t records = 0;          // records read (inside compressed ones too), rounds and all
  uint64_t samples = 0;          // SAMPLE records handed out
  uint64_t samples_skipped = 0;  // SAMPLE records not parsed (ReadOptions::samples false)
  uint64_t bad_records = 0;      // records whose fields did not fit (skipped)
  uint64_t unknown_id = 0;       // samples of no recorded event (skipped, as perf does)
  uint64_t rounds = 0;           // FINISHED_ROUND records
  uint64_t compressed = 0;       // COMPRESSED / COMPRESSED2 records
  uint64_t decompressed_bytes = 0;
  uint64_t lost = 0;             // records the kernel lost (LOST), summed
  uint64_t lost_samples = 0;     // samples the kernel lost (LOST_SAMPLES), summed
  uint64_t throttled = 0;        // THROTTLE records
  uint64_t out_of_order = 0;     // records older than records already handed out
  uint64_t sort_overflows = 0;   // times the sort budget forced records out early
  bool truncated = false;        // the data ended inside a record or a section, or was damaged
};

class PerfDataReader {
 public:
  // Opens `path` ("-": standard input) and reads the recording's description: in a file, the
  // header, the events and the feature sections; in a stream, its 16-byte header (the events
  // and features come with the records). Null, with `error`, when it is no perf.data.
  static std::unique_ptr<PerfDataReader> Open(const std::string& path, std::string* error);
  // The same for an open descriptor (not owned) named `name` in messages.
  static std::unique_ptr<PerfDataReader> FromFd(int fd, const std::string& name, std::string* error);
  ~PerfDataReader();

  const Recording& recording() const { return recording_; }
  // A file can be read again (a side-band pass, then the samples); a stream only once.
  bool rereadable() const { return seekable_; }

  // Streams every record to `sink`. Returns false only when nothing could be read at all (the
  // stream was already consumed); damage is in warnings().
  bool Read(RecordSink& sink, const ReadOptions& options = {});

  const ReadStats& stats() const { return stats_; }
  // What was wrong with the recording, one line each with the byte offset: the header's
  // (from Open) and the last Read's.
  std::vector<std::string> warnings() const;

 private:
  class Pass;
  PerfDataReader(int fd, bool owned, std::string name);
  bool ReadHeader(std::string* error);
  bool ReadFileHeader(std::span<const uint8_t> start, std::string* error);
  void ReadFeatures(uint64_t table_offset, const uint64_t bitmap[4]);
  bool ReadAt(uint64_t offset, uint64_t size, std::vector<uint8_t>* out) const;
  void Warn(std::vector<std::string>& list, std::string message);

  int fd_;
  bool owned_;
  std::string name_;
  bool seekable_ = false;
  bool consumed_ = false;  // a stream, read once
  uint64_t data_begin_ = 0;
  uint64_t data_end_ = UINT64_MAX;
  Recording recording_;
  ReadStats stats_;
  std::vector<std::string> header_warnings_;
  std::vector<std::string> read_warnings_;
};

// Caps on what a recording can make the reader hold.
inline constexpr size_t kMaxEvents = 4096;
inline constexpr size_t kMaxIds = 1u << 22;
inline constexpr uint64_t kMaxFeatureBytes = 64u << 20;
inline constexpr size_t kMaxBuildIds = 1u << 20;

}  // namespace jitdump::perfdata
