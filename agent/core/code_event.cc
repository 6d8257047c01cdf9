// Code events (code_event.h): each built in one block, its copies laid out after the header by
// the same steps run twice, once to measure and once to fill.
#include "agent/core/code_event.h"

#include <cstring>

#include "agent/core/record_queue.h"

namespace jitdump_agent {
namespace {

// Places copies of arrays and strings in the storage that follows an event's header. The same
// steps run twice: over no storage, to measure, and then over the allocated block.
class Tail {
 public:
  explicit Tail(uint8_t* base) : base_(base) {}
  size_t size() const { return used_; }

  // Room for `count` objects; empty while measuring.
  template <typename T>
  std::span<T> Take(size_t count) {
    used_ = (used_ + alignof(T) - 1) & ~(alignof(T) - 1);
    T* const at = base_ != nullptr ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ += count * sizeof(T);
    return at != nullptr ? std::span<T>(at, count) : std::span<T>();
  }
  template <typename T>
  std::span<const T> Copy(std::span<const T> items) {
    const std::span<T> out = Take<T>(items.size());
    if (!out.empty()) std::memcpy(out.data(), items.data(), items.size_bytes());
    return out;
  }
  std::string_view Copy(std::string_view text) {
    const std::span<char> out = Take<char>(text.size());
    if (out.empty()) return {};
    std::memcpy(out.data(), text.data(), text.size());
    return std::string_view(out.data(), out.size());
  }

 private:
  uint8_t* const base_;
  size_t used_ = 0;
};

// The DEBUG_INFO entries with their file names: a load's entries name a handful of files, each
// usually in a run of neighbours that share the very same string, which is copied once.
std::span<const jitdump::DebugEntry> CopyLines(Tail& tail, std::span<const jitdump::DebugEntry> lines) {
  const std::span<jitdump::DebugEntry> out = tail.Take<jitdump::DebugEntry>(lines.size());
  std::string_view source, copy;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view file = lines[i].file;
    if (i == 0 || file.data() != source.data() || file.size() != source.size()) {
      source = file;
      copy = tail.Copy(file);
    }
    if (!out.empty()) out[i] = {lines[i].addr, lines[i].line, lines[i].discrim, copy};
  }
  return out;
}

std::span<const std::string_view> CopyStrings(Tail& tail, std::span<const std::string_view> strings) {
  const std::span<std::string_view> out = tail.Take<std::string_view>(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::string_view copy = tail.Copy(strings[i]);
    if (!out.empty()) out[i] = copy;
  }
  return out;
}

void CopyNames(Tail& tail, const LoadNames& names, CodeEvent& e) {
  e.names.name = tail.Copy(names.name);
  e.names.perf_map_name = names.perf_map_name == names.name ? e.names.name : tail.Copy(names.perf_map_name);
  e.names.lines = CopyLines(tail, names.lines);
  e.names.inline_info = nullptr;
  e.names.intrinsic_placeholder = names.intrinsic_placeholder;
  if (names.inline_info != nullptr) {
    const jitdump::InlineDebugInfo& in = *names.inline_info;
    e.inline_info.timestamp = in.timestamp;
    e.inline_info.files = CopyStrings(tail, in.files);
    e.inline_info.function_names = CopyStrings(tail, in.function_names);
    e.inline_info.functions = tail.Copy(in.functions);
    e.inline_info.calls = tail.Copy(in.calls);
    e.inline_info.ranges = tail.Copy(in.ranges);
    e.inline_info.lines = tail.Copy(in.lines);
    e.names.inline_info = &e.inline_info;
  }
}

void CopyBlob(Tail& tail, EventKind kind, const CodeBlob& blob, CodeEvent& e) {
  e.kind = kind;
  e.replayed = blob.replayed;
  e.tid = blob.tid;
  e.timestamp = blob.timestamp;
  e.code_addr = blob.code_addr;
  e.code_size = blob.code_size;
  // Last: the typed arrays before it stay aligned without padding.
  e.code = blob.code != nullptr
               ? tail.Copy(std::span<const uint8_t>(static_cast<const uint8_t*>(blob.code), blob.code_size)).data()
               : nullptr;
}

// Runs `steps(tail, event)` once to measure and once to fill a block of that size.
template <typename Steps>
CodeEvent* Build(RecordQueue& queue, const Steps& steps) {
  Tail measure(nullptr);
  CodeEvent probe;
  steps(measure, probe);
  CodeEvent* event = queue.Allocate(measure.size());
  if (event == nullptr) return nullptr;
  Tail tail(reinterpret_cast<uint8_t*>(event + 1));
  steps(tail, *event);
  return event;
}

}  // namespace

CodeEvent* NewDeferredLoad(RecordQueue& queue, const CodeBlob& blob, MethodId method, std::span<const ScopePc> pcs,
                           std::span<const ScopeFrame> frames, ClassPin pin) {
  return Build(queue, [&](Tail& tail, CodeEvent& e) {
    e.method = method;
    e.pin = pin;
    e.pcs = tail.Copy(pcs);
    e.frames = tail.Copy(frames);
    CopyBlob(tail, EventKind::kCompiledLoad, blob, e);
  });
}

CodeEvent* NewDeferredLoad(RecordQueue& queue, const CodeBlob& blob, MethodId method, ScopeCounts counts,
                           ScopeFiller fill, const void* source, ClassPin pin) {
  return Build(queue, [&](Tail& tail, CodeEvent& e) {
    e.method = method;
    e.pin = pin;
    const std::span<ScopePc> pcs = tail.Take<ScopePc>(counts.pcs);
    const std::span<ScopeFrame> frames = tail.Take<ScopeFrame>(counts.frames);
    if (!pcs.empty() || !frames.empty()) fill(source, pcs, frames);  // empty while measuring
    e.pcs = pcs;
    e.frames = frames;
    CopyBlob(tail, EventKind::kCompiledLoad, blob, e);
  });
}

CodeEvent* NewNamedLoad(RecordQueue& queue, EventKind kind, const CodeBlob& blob, const LoadNames& names,
                        bool scratch_buffer) {
  return Build(queue, [&](Tail& tail, CodeEvent& e) {
    e.resolved = true;
    e.scratch_buffer = scratch_buffer;
    CopyNames(tail, names, e);
    CopyBlob(tail, kind, blob, e);
  });
}

CodeEvent* NewUnload(RecordQueue& queue, uint64_t timestamp, uint64_t code_addr, MethodId method) {
  return Build(queue, [&](Tail&, CodeEvent& e) {
    e.kind = EventKind::kUnload;
    e.timestamp = timestamp;
    e.code_addr = code_addr;
    e.method = method;
  });
}

CodeEvent* NewClassPrepared(RecordQueue& queue, uint64_t timestamp, ClassPin pin) {
  return Build(queue, [&](Tail&, CodeEvent& e) {
    e.kind = EventKind::kClassPrepared;
    e.timestamp = timestamp;
    e.pin = pin;
  });
}

}  // namespace jitdump_agent
