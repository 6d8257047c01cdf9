// The rules perf 6.1 and samply apply to a readable dump (consumer_rules.h), one function per
// kind of record they concern.
#include "jitdump/read/consumer_rules.h"

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <unordered_map>

namespace jitdump {
namespace {

void CheckHeader(const FileHeader& h, std::vector<Problem>& problems) {
  if (h.total_size != sizeof(FileHeader)) {
    AddProblem(problems, offsetof(FileHeader, total_size), Severity::kError,
               "header total_size is %u; perf 6.1 only reads headers of exactly 40 bytes (it mis-skips the rest)",
               h.total_size);
  }
  if (h.version > kVersion) {
    AddProblem(problems, offsetof(FileHeader, version), Severity::kError, "version %u: perf 6.1 rejects version > 1",
               h.version);
  }
  if (h.flags & ~kFlagArchTimestamp) {
    AddProblem(problems, offsetof(FileHeader, flags), Severity::kError,
               "flags 0x%" PRIx64 ": perf 6.1 rejects any flag but bit 0 (ARCH_TIMESTAMP)", h.flags);
  } else if (h.flags & kFlagArchTimestamp) {
    AddProblem(problems, offsetof(FileHeader, flags), Severity::kWarning,
               "ARCH_TIMESTAMP flag set: perf needs TIME_CONV in perf.data to use this dump");
  }
  if (h.pad1 != 0) {
    AddProblem(problems, offsetof(FileHeader, pad1), Severity::kWarning,
               "pad1 is 0x%08x, not 0 (node/V8 writes 0xdeadbeef; perf ignores it)", h.pad1);
  }
}

// The header's timestamp must come from the records' clock. Records are NOT required to be in
// timestamp order (producers may move load timestamps earlier), so only the header is compared
// with the records' range.
void CheckClock(const JitDump& dump, std::vector<Problem>& problems) {
  uint64_t min_ts = UINT64_MAX, max_ts = 0;
  for (const Record& r : dump.records) {
    if (r.timestamp == 0) continue;
    min_ts = std::min(min_ts, r.timestamp);
    max_ts = std::max(max_ts, r.timestamp);
  }
  constexpr uint64_t kSlackNs = 60ull * 1000 * 1000 * 1000;
  const uint64_t header_ts = dump.header.timestamp;
  if (header_ts != 0 && max_ts != 0 && header_ts > max_ts + kSlackNs) {
    AddProblem(problems, offsetof(FileHeader, timestamp), Severity::kWarning,
               "header timestamp %" PRIu64 " is later than every record (records span %" PRIu64 "..%" PRIu64
               "): it is from another clock (node writes wall-clock microseconds there)",
               header_ts, min_ts, max_ts);
  }
}

// Counts DEBUG_INFO records whose rows all start 0x40 or more past their load: V8 writes PC+0x40.
struct ShiftCount {
  size_t debug_records = 0;
  size_t shifted_0x40 = 0;
  size_t starts_at_0x40 = 0;
  uint64_t first_shift_offset = 0;
};

// The DEBUG_INFO at `debug` against the CODE_LOAD `load` it applies to (at offset `load_offset`).
void CheckDebugInfo(const Record& debug, const LoadBody& load, uint64_t load_offset, std::vector<Problem>& problems,
                    ShiftCount& shifts) {
  const DebugInfoBody& d = *debug.debug_info();
  if (!d.entries.empty()) ++shifts.debug_records;
  if (d.code_addr != load.code_addr) {
    AddProblem(problems, debug.offset + offsetof(DebugInfoFixed, code_addr), Severity::kError,
               "DEBUG_INFO code_addr 0x%" PRIx64 " differs from the next CODE_LOAD's 0x%" PRIx64 " (offset %" PRIu64
               "); perf applies it to that load regardless",
               d.code_addr, load.code_addr, load_offset);
  }
  uint64_t previous = 0;
  uint64_t min_delta = UINT64_MAX;
  uint64_t entry_offset = debug.offset + sizeof(DebugInfoFixed);
  bool reported_beyond = false;
  for (size_t i = 0; i < d.entries.size(); ++i) {
    const DebugLine& e = d.entries[i];
    if (e.addr < load.code_addr) {
      AddProblem(problems, entry_offset, Severity::kError,
                 "DEBUG_INFO entry %zu addr 0x%" PRIx64 " is below the load's code_addr 0x%" PRIx64
                 " (perf computes unsigned deltas)",
                 i, e.addr, load.code_addr);
    } else {
      min_delta = std::min(min_delta, e.addr - load.code_addr);
      if (e.addr - load.code_addr >= load.code_size && !reported_beyond) {
        reported_beyond = true;
        AddProblem(problems, entry_offset, Severity::kWarning,
                   "DEBUG_INFO entry %zu addr 0x%" PRIx64 " is past the end of the code (0x%" PRIx64 "+0x%" PRIx64 ")",
                   i, e.addr, load.code_addr, load.code_size);
      }
    }
    if (i > 0 && e.addr < previous) {
      AddProblem(problems, entry_offset, Severity::kError,
                 "DEBUG_INFO entry %zu addr 0x%" PRIx64 " is below the previous 0x%" PRIx64 " (entries must ascend)", i,
                 e.addr, previous);
    }
    previous = e.addr;
    entry_offset += sizeof(DebugEntryFixed) + e.file.size() + 1;
  }
  if (min_delta != UINT64_MAX) {
    if (min_delta >= 0x40) {
      if (shifts.shifted_0x40 == 0) shifts.first_shift_offset = debug.offset;
      ++shifts.shifted_0x40;
    }
    if (min_delta == 0x40) ++shifts.starts_at_0x40;
  }
}

// samply applies an inline record to the next CODE_LOAD: its ranges and lines must lie in that
// load's code.
void CheckInlineRecord(const Record& inline_record, const LoadBody& load, uint64_t load_offset,
                       std::vector<Problem>& problems) {
  const InlineBody& info = *inline_record.inline_info();
  for (size_t i = 0; i < info.ranges.size(); ++i) {
    const SamplyRangeRecord& range = info.ranges[i];
    if (uint64_t{range.start_offset} + range.size > load.code_size) {
      AddProblem(problems, inline_record.offset, Severity::kError,
                 "samply DEBUG_INFO2 range %zu [0x%x, +0x%x) is outside the next CODE_LOAD's %" PRIu64
                 " code bytes (offset %" PRIu64 ")",
                 i, range.start_offset, range.size, load.code_size, load_offset);
      break;
    }
  }
  for (size_t i = 0; i < info.lines.size(); ++i) {
    if (info.lines[i].code_offset >= load.code_size && load.code_size != 0) {
      AddProblem(problems, inline_record.offset, Severity::kError,
                 "samply DEBUG_INFO2 line record %zu code_offset 0x%x is outside the next CODE_LOAD's %" PRIu64
                 " code bytes",
                 i, info.lines[i].code_offset, load.code_size);
      break;
    }
  }
}

}  // namespace

std::vector<Problem> Check(const JitDump& dump) {
  std::vector<Problem> problems = dump.problems;
  if (!dump.header_ok) return problems;
  CheckHeader(dump.header, problems);
  CheckClock(dump, problems);

  const Record* pending_debug = nullptr;
  const Record* pending_inline = nullptr;
  std::unordered_map<uint64_t, uint64_t> index_offset;  // code_index -> offset of its load
  ShiftCount shifts;
  for (const Record& r : dump.records) {
    if (r.debug_info() != nullptr) {
      if (pending_debug != nullptr) {
        AddProblem(problems, r.offset, Severity::kWarning,
                   "DEBUG_INFO replaces the one at offset %" PRIu64 " before any CODE_LOAD (perf keeps only the last)",
                   pending_debug->offset);
      }
      pending_debug = &r;
    } else if (r.inline_info() != nullptr) {
      if (pending_inline != nullptr) {
        AddProblem(problems, r.offset, Severity::kWarning,
                   "samply DEBUG_INFO2 replaces the one at offset %" PRIu64 " before any CODE_LOAD",
                   pending_inline->offset);
      }
      pending_inline = &r;
    } else if (const LoadBody* load = r.load()) {
      if (load->code_size > UINT64_MAX - load->code_addr) {
        AddProblem(problems, r.offset + offsetof(CodeLoadFixed, code_addr), Severity::kError,
                   "CODE_LOAD code 0x%" PRIx64 "+%" PRIu64 " runs past the end of the address space", load->code_addr,
                   load->code_size);
      }
      auto [it, inserted] = index_offset.emplace(load->code_index, r.offset);
      if (!inserted) {
        AddProblem(problems, r.offset + offsetof(CodeLoadFixed, code_index), Severity::kError,
                   "code_index %" PRIu64 " repeats the CODE_LOAD at offset %" PRIu64
                   " (perf overwrites jitted-<pid>-<index>.so)",
                   load->code_index, it->second);
      }
      if (pending_debug != nullptr) CheckDebugInfo(*pending_debug, *load, r.offset, problems, shifts);
      if (pending_inline != nullptr) CheckInlineRecord(*pending_inline, *load, r.offset, problems);
      pending_debug = pending_inline = nullptr;
    } else if (const MoveBody* move = r.move()) {
      if (index_offset.find(move->code_index) == index_offset.end()) {
        AddProblem(problems, r.offset + offsetof(CodeMoveRecord, code_index), Severity::kWarning,
                   "CODE_MOVE code_index %" PRIu64 " names no earlier CODE_LOAD", move->code_index);
      }
    }
  }
  if (pending_debug != nullptr) {
    AddProblem(problems, pending_debug->offset, Severity::kWarning, "DEBUG_INFO is not followed by a CODE_LOAD");
  }
  if (pending_inline != nullptr) {
    AddProblem(problems, pending_inline->offset, Severity::kWarning, "samply DEBUG_INFO2 is not followed by a CODE_LOAD");
  }
  if (shifts.debug_records >= 2 && shifts.shifted_0x40 == shifts.debug_records && shifts.starts_at_0x40 > 0) {
    AddProblem(problems, shifts.first_shift_offset, Severity::kWarning,
               "all %zu DEBUG_INFO records start at code_addr+0x40 or later: addresses look shifted by 0x40 "
               "(V8 writes PC+0x40)",
               shifts.debug_records);
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const Problem& a, const Problem& b) { return a.offset < b.offset; });
  return problems;
}

}  // namespace jitdump
