#include "jitdump/perfdata/attr.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "jitdump/perfdata/cursor.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::perfdata {
namespace {

static_assert(std::endian::native == std::endian::little, "the reader assumes a little-endian host");

uint8_t ReverseBits(uint8_t b) {
  b = static_cast<uint8_t>((b & 0xF0) >> 4 | (b & 0x0F) << 4);
  b = static_cast<uint8_t>((b & 0xCC) >> 2 | (b & 0x33) << 2);
  return static_cast<uint8_t>((b & 0xAA) >> 1 | (b & 0x55) << 1);
}

// The attr's bitfield word. A big-endian compiler allocates bitfields from the most significant
// bit of each byte: reversing the bits of every byte (perf's swap_bitfield) gives the
// little-endian layout, where `disabled` is bit 0.
uint64_t Bitfield(std::span<const uint8_t> raw, bool swap) {
  uint8_t bytes[8];
  std::memcpy(bytes, raw.data(), 8);
  if (swap) {
    for (uint8_t& b : bytes) b = ReverseBits(b);
  }
  uint64_t v;
  std::memcpy(&v, bytes, 8);
  return v;
}

const char* HardwareName(uint64_t config) {
  static const char* const kNames[] = {"cycles",       "instructions",           "cache-references",
                                       "cache-misses", "branches",               "branch-misses",
                                       "bus-cycles",   "stalled-cycles-frontend", "stalled-cycles-backend",
                                       "ref-cycles"};
  return config < std::size(kNames) ? kNames[config] : nullptr;
}

const char* SoftwareName(uint64_t config) {
  static const char* const kNames[] = {"cpu-clock",       "task-clock",      "page-faults",
                                       "context-switches", "cpu-migrations", "minor-faults",
                                       "major-faults",    "alignment-faults", "emulation-faults",
                                       "dummy",           "bpf-output",      "cgroup-switches"};
  return config < std::size(kNames) ? kNames[config] : nullptr;
}

}  // namespace

uint32_t AttrSizeOf(std::span<const uint8_t> bytes, bool swap) {
  if (bytes.size() < 8) return kAttrSizeVer0;
  const uint32_t size = LoadU32(bytes.data() + 4, swap);
  return size == 0 ? kAttrSizeVer0 : size;
}

bool ParseAttr(std::span<const uint8_t> bytes, bool swap, EventAttr* attr) {
  if (bytes.size() < kAttrSizeVer0) return false;
  *attr = EventAttr{};
  // Fields past the given bytes (an older, shorter attr) stay 0.
  uint8_t full[128] = {};
  std::memcpy(full, bytes.data(), bytes.size() < sizeof full ? bytes.size() : sizeof full);
  Cursor c(std::span<const uint8_t>(full, sizeof full), swap);
  attr->type = c.U32();
  attr->size = c.U32();
  attr->config = c.U64();
  attr->sample_period = c.U64();
  attr->sample_type = c.U64();
  attr->read_format = c.U64();
  attr->flags = Bitfield(c.Bytes(8), swap);
  attr->wakeup_events = c.U32();
  attr->bp_type = c.U32();
  attr->config1 = c.U64();
  attr->config2 = c.U64();              // 72: PERF_ATTR_SIZE_VER1
  attr->branch_sample_type = c.U64();   // 80: VER2
  attr->sample_regs_user = c.U64();
  attr->sample_stack_user = c.U32();
  attr->clockid = static_cast<int32_t>(c.U32());  // 96: VER3
  attr->sample_regs_intr = c.U64();     // 104: VER4
  attr->aux_watermark = c.U32();
  attr->sample_max_stack = c.U16();
  c.Skip(2);                            // 112: VER5
  attr->aux_sample_size = c.U32();
  c.Skip(4);                            // 120: VER6
  attr->sig_data = c.U64();             // 128: VER7
  return c.ok();
}

std::string DefaultEventName(const EventAttr& attr) {
  const char* known = attr.type == kTypeHardware ? HardwareName(attr.config)
                      : attr.type == kTypeSoftware ? SoftwareName(attr.config)
                                                   : nullptr;
  std::string name;
  if (known != nullptr) {
    name = known;
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%x:%llx", attr.type, static_cast<unsigned long long>(attr.config));
    name = buf;
  }
  // perf's modifiers: only user space sampled is ":u", only the kernel ":k".
  if (attr.exclude_kernel() && !attr.exclude_user()) name += ":u";
  if (attr.exclude_user() && !attr.exclude_kernel()) name += ":k";
  return name;
}

}  // namespace jitdump::perfdata
