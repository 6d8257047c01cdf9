// One recorded event's perf_event_attr: what its records carry (sample_type, read_format,
// sample_id_all, the registers and stack size it samples) and its clock. Parsed from any ABI
// revision (64 bytes and up; fields a shorter attr lacks read as 0, fields a newer perf added
// after the ones known here are ignored, as the kernel's size field promises).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace jitdump::perfdata {

struct EventAttr {
  uint32_t type = 0;
  uint32_t size = 0;  // as the recording says (0 means the first ABI, 64 bytes)
  uint64_t config = 0;
  uint64_t sample_period = 0;  // or the frequency, when `freq`
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;  // the bitfield word: disabled, inherit, ..., sample_id_all, use_clockid, ...
  uint32_t wakeup_events = 0;
  uint32_t bp_type = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  int32_t clockid = 0;
  uint64_t sample_regs_intr = 0;
  uint32_t aux_watermark = 0;
  uint16_t sample_max_stack = 0;
  uint32_t aux_sample_size = 0;
  uint64_t sig_data = 0;

  bool Flag(int bit) const { return (flags >> bit & 1) != 0; }
  bool freq() const { return Flag(10); }
  bool exclude_user() const { return Flag(4); }
  bool exclude_kernel() const { return Flag(5); }
  bool sample_id_all() const { return Flag(18); }
  bool mmap2() const { return Flag(23); }
  bool comm_exec() const { return Flag(24); }
  bool use_clockid() const { return Flag(25); }
  bool build_id() const { return Flag(34); }
};

// Parses an attr of `bytes.size()` bytes (its own `size` field may say less; never more is
// read than given). `swap`: the recording is in the other byte order. False when fewer than
// 64 bytes are given.
bool ParseAttr(std::span<const uint8_t> bytes, bool swap, EventAttr* attr);

// The bytes an attr occupies by its own size field (0: 64), for walking arrays of them.
uint32_t AttrSizeOf(std::span<const uint8_t> bytes, bool swap);

// perf's name for an event it knows from type and config ("cpu-clock", "cycles",
// "instructions", ...), with the ":u"/":k" modifier perf adds when one side is excluded;
// "type:config" in hex otherwise. What the reader calls an event that EVENT_DESC (or, in pipe
// mode, an EVENT_UPDATE record) does not name.
std::string DefaultEventName(const EventAttr& attr);

// One event of the recording: its attr, the ids its records carry (PERF_SAMPLE_ID /
// IDENTIFIER), and its name.
struct Event {
  EventAttr attr;
  std::vector<uint64_t> ids;
  std::string name;
};

}  // namespace jitdump::perfdata
