// The queries on a decoded dump (queries.h).
#include "jitdump/read/queries.h"

#include <algorithm>
#include <iterator>

namespace jitdump {

int64_t FindLoad(const JitDump& dump, uint64_t addr) {
  for (size_t i = dump.records.size(); i-- > 0;) {
    const LoadBody* load = dump.records[i].load();
    if (load != nullptr && addr >= load->code_addr && addr - load->code_addr < load->code_size) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

int64_t FindLoadAt(const JitDump& dump, uint64_t addr, uint64_t timestamp) {
  for (size_t i = dump.records.size(); i-- > 0;) {
    const LoadBody* load = dump.records[i].load();
    if (load != nullptr && dump.records[i].timestamp <= timestamp && addr >= load->code_addr &&
        addr - load->code_addr < load->code_size) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

bool FindLine(const JitDump& dump, size_t load_index, uint64_t addr, std::string* file, uint32_t* line) {
  std::string_view found;
  if (!FindLine(dump, load_index, addr, &found, line)) return false;
  file->assign(found);
  return true;
}

bool FindLine(const JitDump& dump, size_t load_index, uint64_t addr, std::string_view* file, uint32_t* line) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr || addr < load->code_addr) return false;
  if (load->inline_info >= 0) {
    const InlineBody* info = dump.records[static_cast<size_t>(load->inline_info)].inline_info();
    if (info != nullptr && !info->lines.empty() && dump.records[static_cast<size_t>(load->inline_info)].valid) {
      const uint64_t offset = addr - load->code_addr;
      auto it = std::upper_bound(info->lines.begin(), info->lines.end(), offset,
                                 [](uint64_t o, const SamplyLineRecord& l) { return o < l.code_offset; });
      if (it == info->lines.begin()) return false;
      --it;
      *file = it->file_index < info->files.size() ? std::string_view(info->files[it->file_index]) : "?";
      *line = it->line_number;
      return true;
    }
  }
  if (load->debug_info >= 0) {
    const DebugInfoBody* d = dump.records[static_cast<size_t>(load->debug_info)].debug_info();
    if (d == nullptr) return false;
    const DebugLine* best = nullptr;
    for (const DebugLine& e : d->entries) {
      if (e.addr <= addr && (best == nullptr || e.addr >= best->addr)) best = &e;
    }
    if (best == nullptr) return false;
    *file = best->file;
    *line = best->line > 0 ? static_cast<uint32_t>(best->line) : 0;
    return true;
  }
  return false;
}

namespace {

std::vector<InlineFrame> Copies(const std::vector<InlineFrameView>& views) {
  std::vector<InlineFrame> frames;
  frames.reserve(views.size());
  for (const InlineFrameView& v : views) frames.push_back(InlineFrame{std::string(v.function), std::string(v.file), v.line});
  return frames;
}

}  // namespace

std::vector<InlineFrame> InlineChain(const JitDump& dump, size_t load_index, uint64_t addr) {
  std::vector<InlineFrameView> views;
  InlineChain(dump, load_index, addr, &views);
  return Copies(views);
}

void InlineChain(const JitDump& dump, size_t load_index, uint64_t addr, std::vector<InlineFrameView>* out) {
  std::vector<InlineFrameView>& frames = *out;
  frames.clear();
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr || load->inline_info < 0 || addr < load->code_addr) return;
  const Record& rec = dump.records[static_cast<size_t>(load->inline_info)];
  const InlineBody* info = rec.inline_info();
  if (info == nullptr || !rec.valid || info->functions.empty()) return;
  const uint64_t offset = addr - load->code_addr;

  // Walk the DFS list keeping, per depth, whether the current call at that depth contains
  // offset (and so do all its ancestors). A call counts only when its parent does, so those
  // depths are always a run of hits followed by misses: the walk keeps the run's length
  // (`hits`) and how deep the open path is (`open`), and reads a call's ranges only when its
  // parent is a hit (this runs for every JIT frame of a profile that is resolved).
  // A call that does not contain offset is passed over with its whole subtree (subtree_end):
  // none of its calls can, and a large method's list is mostly such subtrees. In an ordered
  // record (InlineBody::ordered), a call's ranges are read up to the first that starts past
  // offset, and a call that starts past offset ends the walk through its parent's calls.
  std::vector<uint32_t> chain;  // call indexes, outermost first
  size_t open = 0;              // depths of the current DFS path
  size_t hits = 0;              // the path's depths [0, hits) contain offset
  const bool can_skip = info->subtree_end.size() == info->calls.size();
  const bool ordered = can_skip && info->ordered;
  std::vector<uint32_t> at_depth(ordered ? info->max_depth + size_t{1} : 0);  // the last call met at each depth
  for (size_t i = 0; i < info->calls.size();) {
    const SamplyInlineCallRecord& c = info->calls[i];
    const size_t depth = c.depth;
    if (depth > open) break;  // malformed; validated elsewhere
    hits = std::min(hits, depth);
    bool hit = false;
    if (hits == depth) {  // the parent (or none at depth 0) contains offset
      const uint64_t begin = info->range_begin[i];
      if (ordered && info->ranges[begin].start_offset > offset) {
        // This call and the parent's calls after it all start past offset.
        i = depth == 0 ? info->calls.size() : info->subtree_end[at_depth[depth - 1]];
        open = depth;
        continue;
      }
      for (uint64_t k = begin; k < begin + c.range_count && k < info->ranges.size(); ++k) {
        const SamplyRangeRecord& r = info->ranges[k];
        if (ordered && r.start_offset > offset) break;
        if (offset >= r.start_offset && offset - r.start_offset < r.size) {
          hit = true;
          break;
        }
      }
    }
    if (ordered) at_depth[depth] = static_cast<uint32_t>(i);
    open = depth + 1;
    if (hit) hits = depth + 1;
    if (hit && depth == chain.size()) chain.push_back(static_cast<uint32_t>(i));
    i = hit || !can_skip || info->subtree_end[i] <= i ? i + 1 : info->subtree_end[i];
  }

  auto function_name = [&](uint32_t function_index) -> std::string_view {
    if (function_index >= info->functions.size()) return "?";
    const uint32_t n = info->functions[function_index].function_name_index;
    return n < info->function_names.size() ? std::string_view(info->function_names[n]) : "?";
  };
  auto function_file = [&](uint32_t function_index) -> std::string_view {
    if (function_index >= info->functions.size()) return "?";
    const uint32_t f = info->functions[function_index].file_index;
    return f < info->files.size() ? std::string_view(info->files[f]) : "?";
  };

  // Innermost: its line from the line records.
  InlineFrameView innermost;
  const uint32_t innermost_function = chain.empty() ? 0 : info->calls[chain.back()].function_index;
  innermost.function = function_name(innermost_function);
  innermost.file = function_file(innermost_function);
  std::string_view file;
  uint32_t line = 0;
  if (FindLine(dump, load_index, addr, &file, &line)) {
    innermost.file = file;
    innermost.line = line;
  }
  frames.push_back(innermost);
  // Each caller's line is the call_line of the call record below it.
  for (size_t k = chain.size(); k-- > 0;) {
    const SamplyInlineCallRecord& call = info->calls[chain[k]];
    const uint32_t caller = k == 0 ? 0 : info->calls[chain[k - 1]].function_index;
    frames.push_back(InlineFrameView{function_name(caller), function_file(caller), call.call_line_number});
  }
}

CodeMap::CodeMap(const JitDump& dump) {
  for (size_t i = 0; i < dump.records.size(); ++i) {
    const LoadBody* load = dump.records[i].load();
    if (load == nullptr || load->code_size == 0) continue;
    const uint64_t start = load->code_addr;
    const uint64_t end = load->code_size > UINT64_MAX - start ? UINT64_MAX : start + load->code_size;
    auto it = spans_.lower_bound(start);
    if (it != spans_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > start) {
        if (prev->second.end > end) spans_[end] = Span{end, prev->second.end, prev->second.record};
        prev->second.end = start;
      }
    }
    it = spans_.lower_bound(start);
    while (it != spans_.end() && it->first < end) {
      if (it->second.end > end) spans_[end] = Span{end, it->second.end, it->second.record};
      it = spans_.erase(it);
    }
    spans_[start] = Span{start, end, i};
  }
}

int64_t CodeMap::Find(uint64_t addr) const {
  auto it = spans_.upper_bound(addr);
  if (it == spans_.begin()) return -1;
  --it;
  return addr < it->second.end ? static_cast<int64_t>(it->second.record) : -1;
}

SidecarIndex::SidecarIndex(const JitDump* sidecar) : sidecar_(sidecar) {
  if (sidecar == nullptr) return;
  for (size_t i = 0; i < sidecar->records.size(); ++i) {
    const LoadBody* load = sidecar->records[i].load();
    if (load != nullptr && load->inline_info >= 0) by_code_index_[load->code_index].push_back(i);
  }
}

int64_t SidecarIndex::Match(const JitDump& dump, size_t load_index) const {
  if (sidecar_ == nullptr) return -1;
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return -1;
  auto it = by_code_index_.find(load->code_index);
  if (it == by_code_index_.end()) return -1;
  for (size_t i : it->second) {
    const LoadBody* copy = sidecar_->records[i].load();
    if (copy->code_addr == load->code_addr && copy->code_size == load->code_size &&
        sidecar_->records[i].timestamp == dump.records[load_index].timestamp) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

std::vector<InlineFrame> InlineChain(const JitDump& dump, const SidecarIndex& sidecar, size_t load_index,
                                     uint64_t addr) {
  std::vector<InlineFrameView> views;
  InlineChain(dump, sidecar, load_index, addr, &views);
  return Copies(views);
}

void InlineChain(const JitDump& dump, const SidecarIndex& sidecar, size_t load_index, uint64_t addr,
                 std::vector<InlineFrameView>* frames) {
  frames->clear();
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return;
  if (load->inline_info >= 0) return InlineChain(dump, load_index, addr, frames);
  const int64_t copy = sidecar.Match(dump, load_index);
  if (copy < 0) return;
  InlineChain(*sidecar.sidecar(), static_cast<size_t>(copy), addr, frames);
}

std::string SourceRange(const JitDump& dump, size_t load_index) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return "";
  std::string file;
  uint32_t lo = UINT32_MAX, hi = 0;
  if (load->inline_info >= 0 && dump.records[static_cast<size_t>(load->inline_info)].valid) {
    const InlineBody* info = dump.records[static_cast<size_t>(load->inline_info)].inline_info();
    if (info != nullptr && !info->functions.empty()) {
      const uint32_t file_index = info->functions[0].file_index;
      if (file_index < info->files.size()) file = info->files[file_index];
      if (info->functions[0].start_line != 0) lo = hi = info->functions[0].start_line;
      // Only the outer function's own lines: skip code inside a depth-0 inline call.
      std::vector<SamplyRangeRecord> inlined;
      for (size_t c = 0; c < info->calls.size(); ++c) {
        if (info->calls[c].depth != 0) continue;
        for (uint64_t k = info->range_begin[c]; k < uint64_t{info->range_begin[c]} + info->calls[c].range_count &&
                                                k < info->ranges.size();
             ++k) {
          inlined.push_back(info->ranges[k]);
        }
      }
      for (const SamplyLineRecord& l : info->lines) {
        if (l.file_index != file_index || l.line_number == 0) continue;
        const bool in_inline = std::any_of(inlined.begin(), inlined.end(), [&](const SamplyRangeRecord& r) {
          return l.code_offset >= r.start_offset && l.code_offset - r.start_offset < r.size;
        });
        if (in_inline) continue;
        lo = std::min(lo, l.line_number);
        hi = std::max(hi, l.line_number);
      }
    }
  }
  if (file.empty() && load->debug_info >= 0) {
    const DebugInfoBody* d = dump.records[static_cast<size_t>(load->debug_info)].debug_info();
    if (d != nullptr && !d->entries.empty()) {
      file = d->entries.front().file;
      for (const DebugLine& e : d->entries) {
        if (e.file != file || e.line <= 0) continue;
        lo = std::min(lo, static_cast<uint32_t>(e.line));
        hi = std::max(hi, static_cast<uint32_t>(e.line));
      }
    }
  }
  if (file.empty()) return "";
  if (lo == UINT32_MAX) return file;
  if (lo == hi) return file + ":" + std::to_string(lo);
  return file + ":" + std::to_string(lo) + "-" + std::to_string(hi);
}

}  // namespace jitdump
