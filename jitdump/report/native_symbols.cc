#include "jitdump/report/native_symbols.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <unordered_map>

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::report {

SymbolizedNames::SymbolizedNames(const perfdata::Recording& recording, symbols::Options options)
    : recording_(recording), symbolizer_(std::move(options)) {}

void SymbolizedNames::SetKernelOnce() {
  if (kernel_set_) return;
  kernel_set_ = true;
  symbols::Kernel kernel;
  for (const perfdata::BuildIdEntry& entry : recording_.features.build_ids) {
    if (entry.filename == "[kernel.kallsyms]") kernel.build_id = entry.id;
  }
  kernel.text_address = kernel_text_;
  kernel.text_end = kernel_text_end_;
  kernel.os_release = recording_.features.os_release;
  symbolizer_.SetRecordingKernel(kernel);
}

namespace {

bool IsKernel(const perfdata::Dso& dso) {
  return dso.kind == perfdata::DsoKind::kKernel || dso.kind == perfdata::DsoKind::kModule;
}

// Whether two DSOs are read from one file (the symbolizer's key: the build id, else the path);
// the kernel and its modules are one (kallsyms).
bool SameFile(const perfdata::Dso& a, const perfdata::Dso& b) {
  if (IsKernel(a) || IsKernel(b)) return IsKernel(a) && IsKernel(b);
  return a.build_id == b.build_id && a.path == b.path;
}

}  // namespace

bool SymbolizedNames::Defer(uint32_t pid, const StackFrame& frame, const FrameDso& dso, uint32_t ticket) {
  const perfdata::Mapping* mapping = frame.mapping;
  if (dso.none || mapping == nullptr || mapping->dso == nullptr) return false;
  switch (mapping->dso->kind) {
    case perfdata::DsoKind::kKernel:
    case perfdata::DsoKind::kModule:
    case perfdata::DsoKind::kFile:
    case perfdata::DsoKind::kVdso:
      break;
    default:
      return false;  // anonymous memory (JIT code: the dumps name it), [heap], [stack]
  }
  const Deferred deferred{mapping->dso, mapping->start, mapping->end, mapping->pgoff, frame.addr, pid, ticket};
  if (!streaming_) {
    deferred_.push_back(deferred);
    return true;
  }
  SetKernelOnce();
  std::vector<NativeName> names;
  Lookup(deferred, &names);
  names_.insert(names_.end(), std::make_move_iterator(names.begin()), std::make_move_iterator(names.end()));
  looked_up_.push_back(ticket);
  first_.push_back(names_.size());
  return true;
}

void SymbolizedNames::Lookup(const Deferred& frame, std::vector<NativeName>* out) {
  out->clear();
  symbols::Lookup found;
  if (IsKernel(*frame.dso)) {
    found = symbolizer_.FindKernel(frame.addr);
  } else {
    symbols::Mapping m;
    m.path = frame.dso->path;
    m.build_id = frame.dso->build_id;
    m.start = frame.start;
    m.end = frame.end;
    m.pgoff = frame.pgoff;
    m.pid = frame.pid;
    found = symbolizer_.Find(m, frame.addr);
  }
  if (found.outcome != symbols::Outcome::kSymbol) return;
  for (const symbols::Frame& f : found.frames) {
    if (f.function.empty()) {
      out->clear();
      return;
    }
    out->push_back(NativeName{f.function, f.file, f.line});
  }
}

void SymbolizedNames::NameDeferred(const std::function<void(uint32_t, std::span<const NativeName>)>& each) {
  for (size_t i = 0; i < looked_up_.size(); ++i) {
    each(looked_up_[i], std::span<const NativeName>(names_.data() + first_[i], first_[i + 1] - first_[i]));
  }
  decltype(looked_up_)().swap(looked_up_);
  decltype(names_)().swap(names_);
  first_.assign(1, 0);
  SetKernelOnce();
  std::vector<Deferred> frames;
  frames.swap(deferred_);
  // The kernel first, then file by file, by address within a file: what one file holds is read
  // once and released before the next file is read. The few DSOs are put in that order first,
  // the frames then sorted by numbers (their DSO's file's place, pid, address).
  std::unordered_map<const perfdata::Dso*, uint32_t> file_of;
  std::vector<const perfdata::Dso*> dsos;
  for (const Deferred& frame : frames) {
    if (file_of.emplace(frame.dso, 0).second) dsos.push_back(frame.dso);
  }
  std::sort(dsos.begin(), dsos.end(), [](const perfdata::Dso* a, const perfdata::Dso* b) {
    if (IsKernel(*a) != IsKernel(*b)) return IsKernel(*a);
    return std::tie(a->build_id, a->path) < std::tie(b->build_id, b->path);
  });
  uint32_t file = 0;
  for (size_t i = 0; i < dsos.size(); ++i) {
    if (i > 0 && !SameFile(*dsos[i - 1], *dsos[i])) ++file;
    file_of[dsos[i]] = file;
  }
  struct Order {
    uint64_t file_and_pid;
    uint64_t address;  // the kernel's, else the file offset
    uint32_t frame;
    bool operator<(const Order& o) const {
      return std::tie(file_and_pid, address, frame) < std::tie(o.file_and_pid, o.address, o.frame);
    }
  };
  std::vector<Order> order;
  order.reserve(frames.size());
  std::vector<uint64_t> kernel_addresses;  // all known now: kallsyms is read for those only
  for (uint32_t i = 0; i < frames.size(); ++i) {
    const Deferred& f = frames[i];
    const bool kernel = IsKernel(*f.dso);
    order.push_back(Order{uint64_t{file_of[f.dso]} << 32 | (kernel ? 0 : f.pid), kernel ? f.addr : f.addr - f.start + f.pgoff, i});
    if (kernel) kernel_addresses.push_back(f.addr);
  }
  std::sort(order.begin(), order.end());
  symbolizer_.WantKernel(std::move(kernel_addresses));
  std::vector<NativeName> names;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i].file_and_pid >> 32 != order[i - 1].file_and_pid >> 32) symbolizer_.Release();
    const Deferred& frame = frames[order[i].frame];
    Lookup(frame, &names);
    each(frame.ticket, names);
  }
  symbolizer_.Release();
}

}  // namespace jitdump::report
