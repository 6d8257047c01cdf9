// The zstd stream of a `perf record -z` recording. perf compresses every ring-buffer read
// through one zstd stream and cuts its output into COMPRESSED records (COMPRESSED2 in perf
// 6.16+), so each record continues the previous one's stream, and a perf record may be split
// across two of them. One decompression context reads them all, in bounded pieces: the output
// of a record goes out in chunks of at most kChunk bytes, and stops at a limit the caller
// sets (a record never decompresses to more than perf's ring buffer: more is a damaged or
// hostile file, not data).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace jitdump::perfdata {

class Decompressor {
 public:
  static constexpr size_t kChunk = 256 * 1024;

  Decompressor();
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  // Decompresses one record's payload, handing the output to `out` piece by piece (each valid
  // during the call). False, with error() set, on a zstd error or when the output would exceed
  // `limit` bytes; the stream is unusable afterwards.
  bool Feed(std::span<const uint8_t> input, uint64_t limit, const std::function<void(std::span<const uint8_t>)>& out);
  const std::string& error() const { return error_; }

 private:
  void* stream_ = nullptr;  // ZSTD_DStream
  std::string error_;
  unsigned char* chunk_ = nullptr;
};

}  // namespace jitdump::perfdata
