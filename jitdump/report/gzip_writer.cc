#include "jitdump/report/gzip_writer.h"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

namespace jitdump::report {
namespace {

constexpr size_t kChunk = 256 * 1024;          // compressed bytes written at a time
constexpr size_t kMaxPiece = size_t{1} << 30;  // igzip counts its input in 32 bits

// The working memory igzip's `level` wants (its default sizes), 0 for level 0.
uint32_t LevelBufferSize(int level) {
  switch (level) {
    case 1:
      return ISAL_DEF_LVL1_DEFAULT;
    case 2:
      return ISAL_DEF_LVL2_DEFAULT;
    case 3:
      return ISAL_DEF_LVL3_DEFAULT;
    default:
      return 0;
  }
}

}  // namespace

bool WriteGzip(std::string_view bytes, int level, std::ostream& out) {
  if (level < 0 || level > ISAL_DEF_MAX_LEVEL) return false;
  const uint32_t level_size = LevelBufferSize(level);
  const std::unique_ptr<uint8_t[]> level_buffer(level_size > 0 ? new (std::nothrow) uint8_t[level_size] : nullptr);
  const std::unique_ptr<uint8_t[]> chunk(new (std::nothrow) uint8_t[kChunk]);
  if ((level_size > 0 && !level_buffer) || !chunk) return false;
  isal_zstream stream;
  isal_deflate_init(&stream);
  stream.gzip_flag = IGZIP_GZIP;
  stream.level = static_cast<uint32_t>(level);
  stream.level_buf = level_buffer.get();
  stream.level_buf_size = level_size;
  stream.flush = NO_FLUSH;
  // The input in pieces igzip can count; the stream ends with the last one.
  size_t fed = 0;
  auto feed = [&] {
    const size_t piece = std::min(bytes.size() - fed, kMaxPiece);
    stream.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data() + fed));
    stream.avail_in = static_cast<uint32_t>(piece);
    fed += piece;
    stream.end_of_stream = fed == bytes.size() ? 1 : 0;
  };
  feed();
  while (stream.internal_state.state != ZSTATE_END) {
    if (stream.avail_in == 0 && !stream.end_of_stream) feed();
    stream.next_out = chunk.get();
    stream.avail_out = static_cast<uint32_t>(kChunk);
    if (isal_deflate(&stream) != COMP_OK) return false;
    const size_t made = kChunk - stream.avail_out;
    if (made > 0 && !out.write(reinterpret_cast<const char*>(chunk.get()), static_cast<std::streamsize>(made))) return false;
  }
  return static_cast<bool>(out);
}

}  // namespace jitdump::report
