#include "jitdump/perfdata/records.h"

#include <bit>

namespace jitdump::perfdata {
namespace {

constexpr uint64_t kTrailerFields =
    kSampleTid | kSampleTime | kSampleId | kSampleStreamId | kSampleCpu | kSampleIdentifier;

// A record's fixed fields end at `offset` into `fields`; what follows is the NUL-terminated,
// 8-byte padded string. The string ends at the first NUL (or at the end of the bytes).
std::string_view TailString(std::span<const uint8_t> fields, size_t offset) {
  if (offset >= fields.size()) return {};
  Cursor c(fields.subspan(offset), false);
  return c.RestAsCString();
}

bool ParseRegisters(Cursor& c, uint64_t mask, Registers* regs) {
  regs->abi = c.U64();
  regs->mask = 0;
  regs->values = {};
  if (regs->abi != 0) {
    regs->mask = mask;
    regs->values = c.U64s(static_cast<uint64_t>(std::popcount(mask)));
  }
  return c.ok();
}

}  // namespace

bool Registers::Get(int bit, uint64_t* value) const {
  if (bit < 0 || bit > 63 || abi == 0 || (mask >> bit & 1) == 0) return false;
  const size_t index = static_cast<size_t>(std::popcount(mask & ((uint64_t{1} << bit) - 1)));
  if (index >= values.size()) return false;
  *value = values[index];
  return true;
}

SampleLayout SampleLayout::Of(const EventAttr& attr) {
  SampleLayout layout;
  layout.sample_type = attr.sample_type;
  layout.read_format = attr.read_format;
  layout.branch_sample_type = attr.branch_sample_type;
  layout.regs_user_mask = attr.sample_regs_user;
  layout.regs_intr_mask = attr.sample_regs_intr;
  layout.sample_period = attr.sample_period;
  layout.sample_id_all = attr.sample_id_all();
  layout.trailer_size = layout.sample_id_all ? 8 * static_cast<uint32_t>(std::popcount(attr.sample_type & kTrailerFields)) : 0;
  layout.unknown_bits = attr.sample_type & ~kKnownSampleBits;
  layout.sample_time_at = 8 * static_cast<uint32_t>(std::popcount(attr.sample_type & (kSampleIdentifier | kSampleIp | kSampleTid)));
  return layout;
}

bool ParseSample(std::span<const uint8_t> body, uint16_t misc, const SampleLayout& layout, bool swap, Sample* s) {
  const uint64_t type = layout.sample_type;
  Cursor c(body, swap);
  s->misc = misc;
  s->sample_type = type;
  s->period = layout.sample_period;
  if (type & kSampleIdentifier) s->identifier = c.U64();
  if (type & kSampleIp) s->ip = c.U64();
  if (type & kSampleTid) {
    s->pid = c.U32();
    s->tid = c.U32();
  }
  if (type & kSampleTime) s->time = c.U64();
  if (type & kSampleAddr) s->addr = c.U64();
  if (type & kSampleId) s->id = c.U64();
  if (type & kSampleStreamId) s->stream_id = c.U64();
  if (type & kSampleCpu) {
    s->cpu = c.U32();
    s->cpu_reserved = c.U32();
  }
  if (type & kSamplePeriod) s->period = c.U64();
  if (type & kSampleRead) {
    const uint64_t format = layout.read_format;
    ReadValues& r = s->read;
    r.group = (format & kFormatGroup) != 0;
    const uint64_t first = c.U64();  // the value, or the group's count
    if (format & kFormatTotalTimeEnabled) r.time_enabled = c.U64();
    if (format & kFormatTotalTimeRunning) r.time_running = c.U64();
    r.stride = 1 + ((format & kFormatId) ? 1 : 0) + ((format & kFormatLost) ? 1 : 0);
    if (r.group) {
      if (first > body.size() / 8 / r.stride) return false;
      r.values = c.U64s(first * r.stride);
    } else {
      // One counter: the value, the times, then its id and lost count.
      r.value = first;
      if (format & kFormatId) r.id = c.U64();
      if (format & kFormatLost) r.lost = c.U64();
    }
  }
  if (type & kSampleCallchain) {
    const uint64_t nr = c.U64();
    s->callchain = c.U64s(nr);
  }
  if (type & kSampleRaw) {
    const uint32_t size = c.U32();
    s->raw = c.Bytes(size);
  }
  if (type & kSampleBranchStack) {
    BranchStack& b = s->branch_stack;
    b.nr = c.U64();
    b.has_hw_index = (layout.branch_sample_type & kBranchHwIndex) != 0;
    if (b.has_hw_index) b.hw_index = c.U64();
    if (b.nr > body.size() / 24) return false;
    b.words = c.U64s(3 * b.nr);
  }
  if (type & kSampleRegsUser) ParseRegisters(c, layout.regs_user_mask, &s->regs_user);
  if (type & kSampleStackUser) {
    const uint64_t size = c.U64();
    s->stack_user = UserStack{};
    if (size != 0) {
      s->stack_user.data = c.Bytes(size);
      s->stack_user.dyn_size = c.U64();
      if (s->stack_user.dyn_size > size) return false;  // perf: "user stack dump failure"
    }
  }
  if (type & (kSampleWeight | kSampleWeightStruct)) {
    const uint64_t word = c.U64();
    if (type & kSampleWeight) {
      s->weight = word;
    } else {
      s->weight_var1 = static_cast<uint32_t>(word);
      s->weight_var2 = static_cast<uint16_t>(word >> 32);
      s->weight_var3 = static_cast<uint16_t>(word >> 48);
      s->weight = s->weight_var1;
    }
  }
  if (type & kSampleDataSrc) s->data_src = c.U64();
  if (type & kSampleTransaction) s->transaction = c.U64();
  if (type & kSampleRegsIntr) ParseRegisters(c, layout.regs_intr_mask, &s->regs_intr);
  if (type & kSamplePhysAddr) s->phys_addr = c.U64();
  if (type & kSampleCgroup) s->cgroup = c.U64();
  if (type & kSampleDataPageSize) s->data_page_size = c.U64();
  if (type & kSampleCodePageSize) s->code_page_size = c.U64();
  if (layout.unknown_bits != 0) return c.ok();  // where a newer field sits is unknown: stop here
  if (type & kSampleAux) {
    const uint64_t size = c.U64();
    s->aux = c.Bytes(size);
  }
  return c.ok();
}

bool ParseSampleId(std::span<const uint8_t> body, const SampleLayout& layout, bool swap, SampleId* id) {
  *id = SampleId{};
  if (!layout.sample_id_all || layout.trailer_size == 0) return true;
  if (body.size() < layout.trailer_size) return false;
  const uint64_t type = layout.sample_type;
  Cursor c(body.subspan(body.size() - layout.trailer_size), swap);
  id->fields = type & kTrailerFields;
  if (type & kSampleTid) {
    id->pid = c.U32();
    id->tid = c.U32();
  }
  if (type & kSampleTime) id->time = c.U64();
  if (type & kSampleId) id->id = c.U64();
  if (type & kSampleStreamId) id->stream_id = c.U64();
  if (type & kSampleCpu) {
    id->cpu = c.U32();
    c.U32();
  }
  if (type & kSampleIdentifier) id->id = c.U64();
  return c.ok();
}

bool ParseMmap(std::span<const uint8_t> fields, uint16_t misc, bool mmap2, bool swap, Mmap* m) {
  Cursor c(fields, swap);
  *m = Mmap{};
  m->mmap2 = mmap2;
  m->misc = misc;
  m->pid = c.U32();
  m->tid = c.U32();
  m->start = c.U64();
  m->len = c.U64();
  m->pgoff = c.U64();
  if (mmap2) {
    if (misc & kMiscMmapBuildId) {
      const uint8_t size = c.U8();
      c.Skip(3);
      const std::span<const uint8_t> id = c.Bytes(20);
      m->build_id = id.first(size <= 20 ? size : 20);
    } else {
      m->maj = c.U32();
      m->min = c.U32();
      m->ino = c.U64();
      m->ino_generation = c.U64();
    }
    m->prot = c.U32();
    m->flags = c.U32();
  } else {
    m->prot = (misc & kMiscMmapData) ? 0x1 /* PROT_READ */ : 0x5 /* PROT_READ | PROT_EXEC */;
  }
  if (!c.ok()) return false;
  m->filename = TailString(fields, c.offset());
  return true;
}

bool ParseComm(std::span<const uint8_t> fields, uint16_t misc, bool swap, Comm* out) {
  Cursor c(fields, swap);
  *out = Comm{};
  out->pid = c.U32();
  out->tid = c.U32();
  out->exec = (misc & kMiscCommExec) != 0;
  if (!c.ok()) return false;
  out->comm = TailString(fields, c.offset());
  return true;
}

bool ParseTask(std::span<const uint8_t> fields, bool fork, bool swap, Task* out) {
  Cursor c(fields, swap);
  *out = Task{};
  out->fork = fork;
  out->pid = c.U32();
  out->ppid = c.U32();
  out->tid = c.U32();
  out->ptid = c.U32();
  out->time = c.U64();
  return c.ok();
}

bool ParseLost(std::span<const uint8_t> fields, bool samples, bool swap, Lost* out) {
  Cursor c(fields, swap);
  *out = Lost{};
  out->samples = samples;
  if (!samples) out->id = c.U64();
  out->lost = c.U64();
  return c.ok();
}

bool ParseThrottle(std::span<const uint8_t> fields, bool unthrottle, bool swap, Throttle* out) {
  Cursor c(fields, swap);
  *out = Throttle{};
  out->unthrottle = unthrottle;
  out->time = c.U64();
  out->id = c.U64();
  out->stream_id = c.U64();
  return c.ok();
}

bool CarriesSampleId(uint32_t type) { return type != kRecordSample && type < kRecordUserTypeStart; }

}  // namespace jitdump::perfdata
