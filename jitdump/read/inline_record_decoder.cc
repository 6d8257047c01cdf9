// The decoder of samply's inline debug-info record (SAMPLY_JIT_CODE_DEBUG_INFO2): its eight
// counts, two padded string lists and four fixed-size lists, with every index, count and the
// DFS order of the inline calls checked. What needs the following CODE_LOAD (ranges and lines
// inside its code) is a consumer rule (consumer_rules.cc).
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "jitdump/read/record_bytes.h"

namespace jitdump {
namespace {

// InlineBody::ordered for a decoded body (its calls, ranges, range_begin and subtree_end).
bool Ordered(const InlineBody& info) {
  const size_t n = info.calls.size();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t begin = info.range_begin[i];
    const uint64_t count = info.calls[i].range_count;
    if (count == 0 || begin + count > info.ranges.size()) return false;
    for (uint64_t k = begin + 1; k < begin + count; ++k) {
      if (info.ranges[k].start_offset < info.ranges[k - 1].start_offset) return false;
    }
    const size_t sibling = info.subtree_end[i];  // the next call not inside this one's
    if (sibling < n && info.calls[sibling].depth == info.calls[i].depth) {
      const uint64_t sibling_begin = info.range_begin[sibling];
      if (info.calls[sibling].range_count == 0 || sibling_begin >= info.ranges.size() ||
          info.ranges[sibling_begin].start_offset < info.ranges[begin].start_offset) {
        return false;
      }
    }
  }
  return true;
}

// Collects the record's errors (which make it invalid) and warnings.
class InlineProblems {
 public:
  explicit InlineProblems(JitDump& dump) : dump_(dump) {}
  void Error(uint64_t offset, const char* format, ...) __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, format);
    Add(offset, Severity::kError, format, args);
    va_end(args);
    ok_ = false;
  }
  void Warning(uint64_t offset, const char* format, ...) __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, format);
    Add(offset, Severity::kWarning, format, args);
    va_end(args);
  }
  bool ok() const { return ok_; }

 private:
  void Add(uint64_t offset, Severity severity, const char* format, va_list args) {
    char message[512];
    std::vsnprintf(message, sizeof message, format, args);
    dump_.problems.push_back(Problem{offset, severity, std::string("samply ") + message});
  }
  JitDump& dump_;
  bool ok_ = true;
};

// One of the record's padded string lists: `count` NUL-terminated strings in `size` bytes,
// padded with zeros to a multiple of 4. Returns false on error.
bool DecodeStringList(const RecordBytes& b, uint64_t begin, uint32_t size, uint32_t count, const char* what,
                      std::vector<std::string>& out, InlineProblems& problems) {
  if (count > size) {
    problems.Error(begin, "%s: %u strings cannot fit in %u bytes", what, count, size);
    return false;
  }
  out.reserve(count);
  uint64_t p = begin;
  const uint64_t end = begin + size;
  for (uint32_t i = 0; i < count; ++i) {
    const std::optional<std::string_view> text = b.CString(p, end);
    if (!text) {
      problems.Error(p, "%s: string %u has no NUL inside the list's %u bytes", what, i, size);
      return false;
    }
    out.emplace_back(*text);
    p += text->size() + 1;
  }
  const uint64_t used = p - begin;
  const uint64_t padded = (used + 3) & ~uint64_t{3};
  if (padded != size) {
    problems.Error(begin, "%s: list size %u does not match its strings (%" PRIu64 " bytes, padded to %" PRIu64 ")",
                   what, size, used, padded);
    return false;
  }
  for (uint64_t q = p; q < end; ++q) {
    if (b.Byte(q) != 0) {
      problems.Warning(q, "%s: padding byte is not zero", what);
      break;
    }
  }
  return true;
}

// An inlined call's code lies inside its caller's: warns when a range leaves every range of the
// enclosing call. Needs consistent lists (every range_count and the range total checked).
// A call's ranges as a question: does one of them hold [start, end)? Sorted by start with the
// largest end so far, so that each question is a binary search instead of a scan (a caller
// inlined into a large method has hundreds of ranges, each callee's checked against them all).
class RangeCover {
 public:
  void Reset(const InlineBody& info, uint32_t call) {
    by_start_.clear();
    const uint32_t begin = info.range_begin[call];
    for (uint32_t q = begin; q < begin + info.calls[call].range_count; ++q) {
      const SamplyRangeRecord& r = info.ranges[q];
      by_start_.emplace_back(r.start_offset, uint64_t{r.start_offset} + r.size);
    }
    std::sort(by_start_.begin(), by_start_.end());
    for (size_t i = 1; i < by_start_.size(); ++i) by_start_[i].second = std::max(by_start_[i].second, by_start_[i - 1].second);
  }
  // Whether a range starting at or before `start` reaches `end`.
  bool Holds(uint64_t start, uint64_t end) const {
    auto it = std::upper_bound(by_start_.begin(), by_start_.end(), start,
                               [](uint64_t value, const std::pair<uint64_t, uint64_t>& r) { return value < r.first; });
    return it != by_start_.begin() && std::prev(it)->second >= end;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> by_start_;  // (start, the largest end of those up to here)
};

void CheckRangesNest(const InlineBody& info, uint64_t ranges_at, InlineProblems& problems) {
  std::vector<uint32_t> parents;  // call index per depth
  // The cover of each depth's call on the path, built when a child first asks.
  std::vector<RangeCover> covers;
  std::vector<int64_t> cover_of;  // per depth: the call its cover describes, -1 for none yet
  for (uint32_t i = 0; i < info.calls.size(); ++i) {
    const SamplyInlineCallRecord& c = info.calls[i];
    parents.resize(c.depth);
    if (c.depth > 0) {
      const uint32_t parent_index = parents[c.depth - 1];
      if (covers.size() < c.depth) {
        covers.resize(c.depth);
        cover_of.resize(c.depth, -1);
      }
      if (cover_of[c.depth - 1] != parent_index) {
        covers[c.depth - 1].Reset(info, parent_index);
        cover_of[c.depth - 1] = parent_index;
      }
      const RangeCover& cover = covers[c.depth - 1];
      for (uint32_t k = info.range_begin[i]; k < info.range_begin[i] + c.range_count; ++k) {
        const SamplyRangeRecord& r = info.ranges[k];
        if (!cover.Holds(r.start_offset, uint64_t{r.start_offset} + r.size)) {
          problems.Warning(ranges_at + uint64_t{k} * sizeof(SamplyRangeRecord),
                           "DEBUG_INFO2 inline call %u: range [0x%x, +0x%x) is not inside a range of its caller "
                           "(call %u)",
                           i, r.start_offset, r.size, parent_index);
        }
      }
    }
    parents.push_back(i);
  }
}

}  // namespace

void DecodeInlineRecord(const RecordBytes& b, uint64_t off, uint64_t total, Record& record, JitDump& dump) {
  using Fixed = SamplyDebugInfo2Fixed;
  constexpr uint64_t kFixed = sizeof(Fixed);
  if (!HasRoomFor(off, total, kFixed, "samply DEBUG_INFO2", "fixed part", record, dump)) return;
  InlineProblems problems(dump);
  record.valid = false;
  const auto counts = b.Read<Fixed>(off);
  const uint64_t need = uint64_t{counts.file_list_size} + counts.function_names_list_size +
                        uint64_t{counts.function_count} * sizeof(SamplyFunctionRecord) +
                        uint64_t{counts.inline_call_record_count} * sizeof(SamplyInlineCallRecord) +
                        uint64_t{counts.range_count} * sizeof(SamplyRangeRecord) +
                        uint64_t{counts.line_record_count} * sizeof(SamplyLineRecord);
  const uint64_t avail = total - kFixed;
  if (need > avail) {
    problems.Error(off + offsetof(Fixed, file_count),
                   "DEBUG_INFO2 lists need %" PRIu64 " bytes but the record has %" PRIu64, need, avail);
    return;
  }
  if (counts.file_list_size % 4 != 0) {
    problems.Error(off + offsetof(Fixed, file_list_size), "DEBUG_INFO2 file_list_size %u is not a multiple of 4",
                   counts.file_list_size);
    return;
  }
  if (counts.function_names_list_size % 4 != 0) {
    problems.Error(off + offsetof(Fixed, function_names_list_size),
                   "DEBUG_INFO2 function_names_list_size %u is not a multiple of 4", counts.function_names_list_size);
    return;
  }
  if (need < avail) {
    problems.Warning(off + kFixed + need, "DEBUG_INFO2 has %" PRIu64 " unused bytes after its lists", avail - need);
  }
  InlineBody info;
  uint64_t p = off + kFixed;
  if (!DecodeStringList(b, p, counts.file_list_size, counts.file_count, "file list", info.files, problems)) return;
  p += counts.file_list_size;
  if (!DecodeStringList(b, p, counts.function_names_list_size, counts.function_names_count, "function name list",
                        info.function_names, problems)) {
    return;
  }
  p += counts.function_names_list_size;

  const uint64_t functions_at = p;
  info.functions.resize(counts.function_count);
  for (uint32_t i = 0; i < counts.function_count; ++i, p += sizeof(SamplyFunctionRecord)) {
    const SamplyFunctionRecord& f = info.functions[i] = b.Read<SamplyFunctionRecord>(p);
    if (f.function_name_index >= counts.function_names_count) {
      problems.Error(p + offsetof(SamplyFunctionRecord, function_name_index),
                     "DEBUG_INFO2 function %u: function_name_index %u out of range (%u names)", i,
                     f.function_name_index, counts.function_names_count);
    }
    if (f.file_index >= counts.file_count) {
      problems.Error(p + offsetof(SamplyFunctionRecord, file_index),
                     "DEBUG_INFO2 function %u: file_index %u out of range (%u files)", i, f.file_index,
                     counts.file_count);
    }
  }
  if (counts.function_count == 0) {
    problems.Error(functions_at, "DEBUG_INFO2 has no function records (the first describes the outer function)");
  }

  info.calls.resize(counts.inline_call_record_count);
  info.range_begin.resize(counts.inline_call_record_count);
  uint64_t ranges_used = 0;
  uint32_t previous_depth = 0;
  for (uint32_t i = 0; i < counts.inline_call_record_count; ++i, p += sizeof(SamplyInlineCallRecord)) {
    const SamplyInlineCallRecord& c = info.calls[i] = b.Read<SamplyInlineCallRecord>(p);
    if (i == 0 && c.depth != 0) {
      problems.Error(p + offsetof(SamplyInlineCallRecord, depth), "DEBUG_INFO2 inline call 0 has depth %u (must be 0)",
                     c.depth);
    }
    if (i > 0 && c.depth > previous_depth + 1) {
      problems.Error(p + offsetof(SamplyInlineCallRecord, depth),
                     "DEBUG_INFO2 inline call %u: depth %u deeper than previous depth %u + 1", i, c.depth,
                     previous_depth);
    }
    previous_depth = c.depth;
    info.max_depth = std::max(info.max_depth, c.depth + 1);
    if (c.range_count == 0) {
      problems.Error(p + offsetof(SamplyInlineCallRecord, range_count),
                     "DEBUG_INFO2 inline call %u has range_count 0 (must be >= 1)", i);
    }
    if (c.function_index >= counts.function_count) {
      problems.Error(p + offsetof(SamplyInlineCallRecord, function_index),
                     "DEBUG_INFO2 inline call %u: function_index %u out of range (%u functions)", i, c.function_index,
                     counts.function_count);
    }
    info.range_begin[i] = static_cast<uint32_t>(std::min<uint64_t>(ranges_used, UINT32_MAX));
    ranges_used += c.range_count;
  }
  // Each call's subtree ends at the next call no deeper than it (the list is in depth-first
  // order). Calls still open at the end end with the list.
  info.subtree_end.assign(info.calls.size(), static_cast<uint32_t>(info.calls.size()));
  {
    std::vector<uint32_t> open;  // calls whose subtree the walk is in, outermost first
    for (uint32_t i = 0; i < info.calls.size(); ++i) {
      while (!open.empty() && info.calls[open.back()].depth >= info.calls[i].depth) {
        info.subtree_end[open.back()] = i;
        open.pop_back();
      }
      open.push_back(i);
    }
  }
  if (ranges_used != counts.range_count) {
    problems.Error(off + offsetof(Fixed, range_count),
                   "DEBUG_INFO2 inline calls use %" PRIu64 " ranges but range_count is %u", ranges_used,
                   counts.range_count);
  }

  const uint64_t ranges_at = p;
  info.ranges.resize(counts.range_count);
  for (uint32_t i = 0; i < counts.range_count; ++i, p += sizeof(SamplyRangeRecord)) {
    info.ranges[i] = b.Read<SamplyRangeRecord>(p);
  }
  info.ordered = Ordered(info);
  if (problems.ok() && ranges_used == counts.range_count) CheckRangesNest(info, ranges_at, problems);

  info.lines.resize(counts.line_record_count);
  for (uint32_t i = 0; i < counts.line_record_count; ++i, p += sizeof(SamplyLineRecord)) {
    const SamplyLineRecord& l = info.lines[i] = b.Read<SamplyLineRecord>(p);
    if (l.file_index >= counts.file_count) {
      problems.Error(p + offsetof(SamplyLineRecord, file_index),
                     "DEBUG_INFO2 line record %u: file_index %u out of range (%u files)", i, l.file_index,
                     counts.file_count);
    }
    if (i > 0 && l.code_offset < info.lines[i - 1].code_offset) {
      problems.Error(p + offsetof(SamplyLineRecord, code_offset),
                     "DEBUG_INFO2 line record %u: code_offset 0x%x is below the previous 0x%x (must be sorted)", i,
                     l.code_offset, info.lines[i - 1].code_offset);
    }
  }
  record.valid = problems.ok();
  record.body = std::make_unique<InlineBody>(std::move(info));
}

}  // namespace jitdump
