#include "jitdump/perfdata/decompressor.h"

#include <zstd.h>

#include <new>

namespace jitdump::perfdata {

Decompressor::Decompressor() {
  stream_ = ZSTD_createDStream();
  chunk_ = new (std::nothrow) unsigned char[kChunk];
  if (stream_ == nullptr || chunk_ == nullptr) {
    error_ = "no memory for a zstd stream";
  } else {
    const size_t rc = ZSTD_initDStream(static_cast<ZSTD_DStream*>(stream_));
    if (ZSTD_isError(rc)) error_ = ZSTD_getErrorName(rc);
  }
}

Decompressor::~Decompressor() {
  if (stream_ != nullptr) ZSTD_freeDStream(static_cast<ZSTD_DStream*>(stream_));
  delete[] chunk_;
}

bool Decompressor::Feed(std::span<const uint8_t> input, uint64_t limit,
                        const std::function<void(std::span<const uint8_t>)>& out) {
  if (!error_.empty()) return false;
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  uint64_t produced = 0;
  for (;;) {
    ZSTD_outBuffer chunk{chunk_, kChunk, 0};
    const size_t before = in.pos;
    const size_t rc = ZSTD_decompressStream(static_cast<ZSTD_DStream*>(stream_), &chunk, &in);
    if (ZSTD_isError(rc)) {
      error_ = ZSTD_getErrorName(rc);
      return false;
    }
    produced += chunk.pos;
    if (produced > limit) {
      error_ = "a record decompresses to more than " + std::to_string(limit) + " bytes";
      return false;
    }
    if (chunk.pos > 0) out(std::span<const uint8_t>(chunk_, chunk.pos));
    // Done when the input is consumed and zstd had no more to flush (a full chunk may mean
    // more is waiting); no progress at all means the rest waits for the next record.
    if (in.pos == in.size && chunk.pos < chunk.size) return true;
    if (chunk.pos == 0 && in.pos == before) return true;
  }
}

}  // namespace jitdump::perfdata
