#include "jitdump/perfdata/recording.h"

#include "jitdump/perfdata/cursor.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::perfdata {
namespace {

// A perf_header_string feature (hostname, os release, ...).
bool ParseString(std::span<const uint8_t> bytes, bool swap, std::string* out) {
  Cursor c(bytes, swap);
  const std::string_view text = c.HeaderString();
  if (!c.ok()) return false;
  out->assign(text);
  return true;
}

bool ParseEventDesc(std::span<const uint8_t> bytes, bool swap, std::vector<Event>* events) {
  Cursor c(bytes, swap);
  const uint32_t nr = c.U32();
  const uint32_t attr_size = c.U32();
  if (!c.ok() || attr_size < kAttrSizeVer0 || nr > bytes.size() / attr_size) return false;
  for (uint32_t i = 0; i < nr; ++i) {
    c.Skip(attr_size);
    const uint32_t nr_ids = c.U32();
    const std::string_view name = c.HeaderString();
    const U64Array ids = c.U64s(nr_ids);
    if (!c.ok()) return false;
    // Matched to the recording's events by id (what perf does), else by position.
    Event* match = nullptr;
    for (Event& e : *events) {
      for (size_t k = 0; k < ids.size() && match == nullptr; ++k) {
        for (uint64_t id : e.ids) {
          if (id == ids[k]) {
            match = &e;
            break;
          }
        }
      }
      if (match) break;
    }
    if (match == nullptr && i < events->size() && (*events)[i].ids.empty()) match = &(*events)[i];
    if (match != nullptr && !name.empty()) match->name.assign(name);
  }
  return true;
}

}  // namespace

int64_t Recording::EventNamed(const std::string& name) const {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

bool ParseBuildIdEvent(std::span<const uint8_t> record, bool swap, BuildIdEntry* entry) {
  Cursor c(record, swap);
  c.U32();  // type
  const uint16_t misc = c.U16();
  const uint16_t size = c.U16();
  if (!c.ok() || size < 8 + 4 + 24 || size > record.size()) return false;
  Cursor body(record.first(size).subspan(8), swap);
  entry->pid = static_cast<int32_t>(body.U32());
  const std::span<const uint8_t> id = body.Bytes(24);
  if (!body.ok()) return false;
  size_t id_size = 20;
  if ((misc & kMiscBuildIdSize) != 0 && id[20] <= 20) id_size = id[20];
  entry->id.assign(id.begin(), id.begin() + static_cast<std::ptrdiff_t>(id_size));
  entry->cpumode = misc & kMiscCpumodeMask;
  entry->filename.assign(body.RestAsCString());
  return true;
}

bool ParseFeature(uint32_t feature, std::span<const uint8_t> bytes, bool swap, Features* f,
                  std::vector<Event>* events) {
  Cursor c(bytes, swap);
  bool ok = true;
  switch (feature) {
    case kFeatHostname: ok = ParseString(bytes, swap, &f->hostname); break;
    case kFeatOsRelease: ok = ParseString(bytes, swap, &f->os_release); break;
    case kFeatVersion: ok = ParseString(bytes, swap, &f->version); break;
    case kFeatArch: ok = ParseString(bytes, swap, &f->arch); break;
    case kFeatCpuDesc: ok = ParseString(bytes, swap, &f->cpu_desc); break;
    case kFeatCpuId: ok = ParseString(bytes, swap, &f->cpu_id); break;
    case kFeatNrCpus: {
      const uint32_t available = c.U32();
      const uint32_t online = c.U32();
      if ((ok = c.ok())) {
        f->nr_cpus_available = available;
        f->nr_cpus_online = online;
      }
      break;
    }
    case kFeatTotalMem: {
      const uint64_t kb = c.U64();
      if ((ok = c.ok())) f->total_mem_kb = kb;
      break;
    }
    case kFeatCmdline: {
      const uint32_t nr = c.U32();
      std::vector<std::string> args;
      for (uint32_t i = 0; i < nr && c.ok(); ++i) {
        const std::string_view arg = c.HeaderString();
        if (c.ok()) args.emplace_back(arg);
      }
      if ((ok = c.ok())) f->cmdline = std::move(args);
      break;
    }
    case kFeatBuildId: {
      // A sequence of build_id_events, each header.size long.
      size_t pos = 0;
      while (pos + 8 <= bytes.size()) {
        BuildIdEntry entry;
        const std::span<const uint8_t> rest = bytes.subspan(pos);
        Cursor header(rest, swap);
        header.Skip(6);
        const uint16_t size = header.U16();
        if (size < 8 || !ParseBuildIdEvent(rest, swap, &entry)) {
          ok = pos == bytes.size();
          break;
        }
        f->build_ids.push_back(std::move(entry));
        pos += size;
      }
      break;
    }
    case kFeatEventDesc: ok = events != nullptr && ParseEventDesc(bytes, swap, events); break;
    case kFeatSampleTime: {
      const uint64_t first = c.U64();
      const uint64_t last = c.U64();
      if ((ok = c.ok())) {
        f->first_sample_time = first;
        f->last_sample_time = last;
      }
      break;
    }
    case kFeatClockId: {
      const uint64_t resolution = c.U64();
      if ((ok = c.ok())) f->clock_resolution_ns = resolution;
      break;
    }
    case kFeatClockData: {
      ClockData d;
      d.version = c.U32();
      d.clockid = c.U32();
      d.wall_clock_ns = c.U64();
      d.clockid_time_ns = c.U64();
      if ((ok = c.ok())) f->clock_data = d;
      break;
    }
    case kFeatCompressed: {
      Compression z;
      z.version = c.U32();
      z.type = c.U32();
      z.level = c.U32();
      z.ratio = c.U32();
      z.mmap_len = c.U32();
      if ((ok = c.ok())) f->compression = z;
      break;
    }
    case kFeatDirFormat: {
      const uint64_t version = c.U64();
      if ((ok = c.ok())) f->dir_format = version;
      break;
    }
    default:
      break;  // present, not decoded
  }
  if (ok && feature < f->present.size()) f->present.set(feature);
  return ok;
}

}  // namespace jitdump::perfdata
