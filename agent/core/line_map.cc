// PcDescs to DEBUG_INFO rows (line_map.h).
#include "agent/core/line_map.h"

#include <algorithm>

namespace jitdump_agent {

LineTable::LineTable(std::vector<LineNumber> entries) : entries_(std::move(entries)) {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const LineNumber& a, const LineNumber& b) { return a.start_bci < b.start_bci; });
}

int32_t LineTable::LineAt(int64_t bci) const {
  if (entries_.empty()) return 0;
  if (bci < 0) return FirstLine();
  auto it = std::upper_bound(entries_.begin(), entries_.end(), bci,
                             [](int64_t value, const LineNumber& e) { return value < e.start_bci; });
  if (it == entries_.begin()) return entries_.front().line;
  return std::prev(it)->line;
}

int32_t LineTable::FirstLine() const {
  if (entries_.empty()) return 0;
  // The entry at the lowest bci is where the method starts executing.
  return entries_.front().line;
}

std::vector<LineRow> BuildLineRows(uint64_t code_start, uint64_t code_end, std::span<const PcSite> sites,
                                   bool closing_row) {
  std::vector<LineRow> rows;
  BuildLineRows(code_start, code_end, sites, closing_row, rows);
  return rows;
}

void BuildLineRows(uint64_t code_start, uint64_t code_end, std::span<const PcSite> sites, bool closing_row,
                   std::vector<LineRow>& rows) {
  rows.clear();
  rows.reserve(sites.size() + 1);
  uint64_t range_start = code_start;
  uint64_t described_end = code_start;  // end of the last range that got a row
  for (const PcSite& site : sites) {
    if (site.pc <= range_start || site.pc > code_end) continue;  // empty or outside this code
    const Frame* frame = nullptr;
    for (const Frame& f : site.frames) {
      if (f.method != nullptr && f.method->has_lines()) {
        frame = &f;
        break;
      }
    }
    if (frame != nullptr) {
      const std::string* file = &frame->method->file;
      const int32_t line = frame->method->lines.LineAt(frame->bci);
      // Same method, same string: the pointer compare settles nearly every case.
      const bool same = !rows.empty() && rows.back().line == line &&
                        (rows.back().file == file || *rows.back().file == *file);
      if (!same) rows.push_back({range_start, file, line});
      described_end = site.pc;
    }
    range_start = site.pc;
  }
  if (closing_row && !rows.empty() && described_end > rows.back().addr) {
    const LineRow last = rows.back();
    rows.push_back({described_end, last.file, last.line});
  }
}

}  // namespace jitdump_agent
