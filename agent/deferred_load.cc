#include "agent/deferred_load.h"

#include <cstring>

namespace jitdump_agent {
namespace {

struct DeferredLoadHeader {
  jmethodID method;
  jobject pin;
  uint32_t tid;
  uint32_t pc_count;
  uint32_t frame_count;
  uint32_t has_code;
};
static_assert(sizeof(DeferredLoadHeader) % alignof(ScopePc) == 0);
static_assert(sizeof(ScopePc) % alignof(ScopeFrame) == 0 && sizeof(ScopeFrame) % alignof(ScopePc) == 0);

}  // namespace

Batch* BuildDeferredLoad(RecordQueue& queue, const CompiledLoadEvent& e, jobject pin) {
  const size_t pcs_bytes = e.pcs.size_bytes();
  const size_t frames_bytes = e.frames.size_bytes();
  const size_t code_bytes = e.code != nullptr ? e.code_size : 0;
  Batch* batch = queue.Allocate(sizeof(DeferredLoadHeader) + pcs_bytes + frames_bytes + code_bytes);
  if (batch == nullptr) return nullptr;
  batch->kind = BatchKind::kDeferredLoad;
  batch->replayed = e.replayed;
  batch->timestamp = e.timestamp;
  batch->code_addr = e.code_addr;
  batch->code_size = e.code_size;

  const DeferredLoadHeader header{e.method, pin, e.tid, static_cast<uint32_t>(e.pcs.size()),
                                  static_cast<uint32_t>(e.frames.size()), e.code != nullptr};
  uint8_t* out = batch->payload();
  std::memcpy(out, &header, sizeof header);
  out += sizeof header;
  if (pcs_bytes != 0) std::memcpy(out, e.pcs.data(), pcs_bytes);
  out += pcs_bytes;
  if (frames_bytes != 0) std::memcpy(out, e.frames.data(), frames_bytes);
  out += frames_bytes;
  if (code_bytes != 0) std::memcpy(out, e.code, code_bytes);
  return batch;
}

CompiledLoadEvent ReadDeferredLoad(const Batch& batch) {
  const uint8_t* in = batch.payload();
  DeferredLoadHeader header;
  std::memcpy(&header, in, sizeof header);
  in += sizeof header;
  CompiledLoadEvent e;
  e.timestamp = batch.timestamp;
  e.tid = header.tid;
  e.method = header.method;
  e.code_addr = batch.code_addr;
  e.code_size = batch.code_size;
  e.replayed = batch.replayed;
  e.pcs = std::span<const ScopePc>(reinterpret_cast<const ScopePc*>(in), header.pc_count);
  in += e.pcs.size_bytes();
  e.frames = std::span<const ScopeFrame>(reinterpret_cast<const ScopeFrame*>(in), header.frame_count);
  in += e.frames.size_bytes();
  e.code = header.has_code != 0 ? in : nullptr;
  return e;
}

jobject DeferredLoadPin(const Batch& batch) {
  DeferredLoadHeader header;
  std::memcpy(&header, batch.payload(), sizeof header);
  return header.pin;
}

}  // namespace jitdump_agent
