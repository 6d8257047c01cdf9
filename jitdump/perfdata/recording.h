// What a perf.data file says about itself: its mode (file or pipe), byte order, the events
// (attrs with their ids and names) and the feature sections perf writes after the data (in
// pipe mode: HEADER_FEATURE records in the stream). Only what a reader of samples needs is
// decoded; every feature present is listed by id.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jitdump/perfdata/attr.h"

namespace jitdump::perfdata {

// HEADER_BUILD_ID entries (and PERF_RECORD_HEADER_BUILD_ID): the build id of a file a sample hit.
struct BuildIdEntry {
  int32_t pid = 0;           // -1 (or the kernel's) for the kernel and its modules
  uint16_t cpumode = 0;      // kCpumodeKernel for the kernel and modules, kCpumodeUser otherwise
  std::vector<uint8_t> id;   // 20 bytes for GNU build ids
  std::string filename;      // "/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]"
};

// HEADER_CLOCK_DATA: the recording clock's reading and the wall clock at one moment.
struct ClockData {
  uint32_t version = 0;
  uint32_t clockid = 0;
  uint64_t wall_clock_ns = 0;
  uint64_t clockid_time_ns = 0;
};

// HEADER_COMPRESSED: how COMPRESSED records were made (perf record -z).
struct Compression {
  uint32_t version = 0;
  uint32_t type = 0;  // 1: zstd
  uint32_t level = 0;
  uint32_t ratio = 0;
  uint32_t mmap_len = 0;  // the ring buffer size: no record decompresses to more
};

struct Features {
  std::bitset<256> present;
  std::string hostname;    // HEADER_HOSTNAME (uname -n)
  std::string os_release;  // HEADER_OSRELEASE (uname -r)
  std::string version;     // HEADER_VERSION: the perf that recorded ("6.1.187")
  std::string arch;        // HEADER_ARCH (uname -m)
  std::string cpu_desc;
  std::string cpu_id;
  uint32_t nr_cpus_available = 0;
  uint32_t nr_cpus_online = 0;
  uint64_t total_mem_kb = 0;
  std::vector<std::string> cmdline;   // HEADER_CMDLINE: perf's argv
  std::vector<BuildIdEntry> build_ids;
  std::optional<uint64_t> clock_resolution_ns;  // HEADER_CLOCKID
  std::optional<ClockData> clock_data;          // HEADER_CLOCK_DATA
  std::optional<uint64_t> first_sample_time;    // HEADER_SAMPLE_TIME
  std::optional<uint64_t> last_sample_time;
  std::optional<Compression> compression;
  std::optional<uint64_t> dir_format;           // HEADER_DIR_FORMAT (perf record --threaded)
};

struct Recording {
  bool pipe = false;        // the stream format: attrs and features arrive as records
  bool swap = false;        // written in the other byte order
  uint64_t file_size = 0;   // 0 for a stream
  uint64_t data_offset = 0;
  uint64_t data_size = 0;   // 0: perf record did not finish (the data then runs to the end)
  std::vector<Event> events;
  Features features;

  // The event whose name is `name` ("cpu-clock"), or -1.
  int64_t EventNamed(const std::string& name) const;
};

// Decodes a feature section's bytes (a file's section, or a HEADER_FEATURE record's payload)
// into `features`; `events` receives EVENT_DESC's names. False when the bytes do not hold
// the feature (the feature is then left as it was).
bool ParseFeature(uint32_t feature, std::span<const uint8_t> bytes, bool swap, Features* features,
                  std::vector<Event>* events);

// One build_id_event (HEADER_BUILD_ID's entries, PERF_RECORD_HEADER_BUILD_ID), from its
// perf_event_header on. False when it does not fit.
bool ParseBuildIdEvent(std::span<const uint8_t> record, bool swap, BuildIdEntry* entry);

}  // namespace jitdump::perfdata
