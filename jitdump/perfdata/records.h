// The records of a perf.data file, decoded: SAMPLE with every field its attr's sample_type
// asks for (PERF_SAMPLE_* in the kernel's order), the side-band records a profile needs (MMAP,
// MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE/UNTHROTTLE) and the sample_id trailer
// the others carry when the attr has sample_id_all.
//
// Everything here is a view into the record's bytes: valid during the sink call that hands it
// out, copied by whoever keeps it. Parsing checks every length against the record: a field
// that does not fit makes the whole record invalid (Parse* returns false), never a read past it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "jitdump/perfdata/attr.h"
#include "jitdump/perfdata/cursor.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::perfdata {

// sample_id: the fields of a sample_type a non-sample record carries at its end (sample_id_all),
// or that a sample carries. `fields` says which are present (kSampleTid, kSampleTime, ...).
struct SampleId {
  uint64_t fields = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  bool has_time() const { return (fields & kSampleTime) != 0; }
  bool has_tid() const { return (fields & kSampleTid) != 0; }
};

// PERF_SAMPLE_READ: one value (with its id and lost count) or a group's values.
struct ReadValues {
  bool group = false;
  uint64_t time_enabled = 0;  // when kFormatTotalTimeEnabled
  uint64_t time_running = 0;  // when kFormatTotalTimeRunning
  // Not a group: the counter's value, id (kFormatId) and lost count (kFormatLost).
  uint64_t value = 0;
  uint64_t id = 0;
  uint64_t lost = 0;
  // A group: every counter's {value, [id], [lost]} in order, `stride` u64s each.
  U64Array values;
  uint32_t stride = 1;
  size_t group_size() const { return stride ? values.size() / stride : 0; }
};

struct BranchEntry {
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t flags = 0;  // mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 ...
};

struct BranchStack {
  uint64_t nr = 0;
  bool has_hw_index = false;
  uint64_t hw_index = 0;
  U64Array words;  // 3 per entry: from, to, flags
  BranchEntry at(size_t i) const { return BranchEntry{words[3 * i], words[3 * i + 1], words[3 * i + 2]}; }
};

// A register set (REGS_USER, REGS_INTR): the ABI (0 none, 1 32-bit, 2 64-bit) and one u64 per
// bit set in the attr's mask, in bit order.
struct Registers {
  uint64_t abi = 0;
  uint64_t mask = 0;
  U64Array values;
  // The value of register `bit` (a bit of the mask: on x86-64 PERF_REG_X86_SP is 7, IP 8, BP 6).
  bool Get(int bit, uint64_t* value) const;
};

// STACK_USER: the bytes copied from the user stack at the sample (starting at the sampled SP),
// `dyn_size` of them valid.
struct UserStack {
  std::span<const uint8_t> data;  // as much as the attr asked for (sample_stack_user)
  uint64_t dyn_size = 0;          // how many bytes the kernel could copy
  std::span<const uint8_t> valid() const { return data.first(dyn_size < data.size() ? dyn_size : data.size()); }
};

struct Sample {
  size_t event = 0;    // index into the recording's events: which attr
  uint16_t misc = 0;   // header.misc
  uint16_t cpumode() const { return misc & kMiscCpumodeMask; }
  bool exact_ip() const { return (misc & kMiscExactIp) != 0; }
  uint64_t sample_type = 0;
  bool has(uint64_t field) const { return (sample_type & field) != 0; }

  uint64_t identifier = 0;
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint32_t cpu_reserved = 0;
  uint64_t period = 0;  // the attr's sample_period when the sample has no PERIOD field
  ReadValues read;
  U64Array callchain;   // ips, innermost first, with PERF_CONTEXT_* markers between
  std::span<const uint8_t> raw;
  BranchStack branch_stack;
  Registers regs_user;
  UserStack stack_user;
  uint64_t weight = 0;  // WEIGHT, or WEIGHT_STRUCT's var1_dw ...
  uint32_t weight_var1 = 0;
  uint16_t weight_var2 = 0;
  uint16_t weight_var3 = 0;
  uint64_t data_src = 0;
  uint64_t transaction = 0;
  Registers regs_intr;
  uint64_t phys_addr = 0;
  uint64_t cgroup = 0;
  uint64_t data_page_size = 0;
  uint64_t code_page_size = 0;
  std::span<const uint8_t> aux;
};

// MMAP (1) and MMAP2 (10).
struct Mmap {
  bool mmap2 = false;
  uint16_t misc = 0;
  uint16_t cpumode() const { return misc & kMiscCpumodeMask; }
  bool data() const { return (misc & kMiscMmapData) != 0; }
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  // MMAP2: the file's device and inode, or (kMiscMmapBuildId) its build id.
  uint32_t maj = 0;
  uint32_t min = 0;
  uint64_t ino = 0;
  uint64_t ino_generation = 0;
  std::span<const uint8_t> build_id;  // empty unless the record carries one
  uint32_t prot = 0;   // PROT_* (MMAP2 only; MMAP is executable unless data())
  uint32_t flags = 0;  // MAP_* (MMAP2 only)
  std::string_view filename;
  SampleId sample_id;
};

// COMM (3).
struct Comm {
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool exec = false;  // kMiscCommExec: the comm changed because the process exec'd
  std::string_view comm;
  SampleId sample_id;
};

// FORK (7) and EXIT (4).
struct Task {
  bool fork = false;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
  uint64_t time = 0;
  SampleId sample_id;
};

// LOST (2): records the kernel dropped; LOST_SAMPLES (13): samples it dropped.
struct Lost {
  bool samples = false;
  uint64_t id = 0;  // LOST only
  uint64_t lost = 0;
  SampleId sample_id;
};

// THROTTLE (5) and UNTHROTTLE (6).
struct Throttle {
  bool unthrottle = false;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  SampleId sample_id;
};

// Any record, undecoded (for the types the reader has no struct for).
struct RawRecord {
  RecordHeader header;
  std::span<const uint8_t> body;  // after the 8-byte header
  SampleId sample_id;             // when the record type carries one and the attr has it
};

// The per-attr knowledge sample parsing needs (precomputed once per event).
struct SampleLayout {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t regs_user_mask = 0;
  uint64_t regs_intr_mask = 0;
  uint64_t sample_period = 0;
  bool sample_id_all = false;
  // The sample_id trailer's size in bytes (for non-sample records with sample_id_all).
  uint32_t trailer_size = 0;
  // Where a SAMPLE's TIME is in its body (after IDENTIFIER, IP, TID), when it has one: the
  // reader asks it of every record to order them.
  uint32_t sample_time_at = 0;
  // sample_type bits this reader does not know (a newer kernel's fields): the fields before
  // AUX are read as ever (the kernel appends new fields after CODE_PAGE_SIZE), AUX is not.
  uint64_t unknown_bits = 0;
  static SampleLayout Of(const EventAttr& attr);
};

// A SAMPLE record's body (after the header) decoded per `layout`. False when a field does
// not fit in the record.
bool ParseSample(std::span<const uint8_t> body, uint16_t misc, const SampleLayout& layout, bool swap, Sample* out);

// The sample_id trailer at the end of a non-sample record's body (when the attr has
// sample_id_all). False when the body is shorter than the trailer.
bool ParseSampleId(std::span<const uint8_t> body, const SampleLayout& layout, bool swap, SampleId* out);

// The record's own fields (the part before the trailer: `body` minus trailer_size bytes).
bool ParseMmap(std::span<const uint8_t> fields, uint16_t misc, bool mmap2, bool swap, Mmap* out);
bool ParseComm(std::span<const uint8_t> fields, uint16_t misc, bool swap, Comm* out);
bool ParseTask(std::span<const uint8_t> fields, bool fork, bool swap, Task* out);
bool ParseLost(std::span<const uint8_t> fields, bool samples, bool swap, Lost* out);
bool ParseThrottle(std::span<const uint8_t> fields, bool unthrottle, bool swap, Throttle* out);

// Every sample_type bit this reader knows (through WEIGHT_STRUCT, Linux 5.12).
inline constexpr uint64_t kKnownSampleBits = (kSampleWeightStruct << 1) - 1;

// Whether records of this type carry the sample_id trailer (the kernel's types; perf's own,
// >= 64, never do).
bool CarriesSampleId(uint32_t type);

}  // namespace jitdump::perfdata
