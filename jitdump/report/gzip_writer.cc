#include "jitdump/report/gzip_writer.h"

#include <libdeflate.h>

#include <algorithm>
#include <memory>
#include <new>

namespace jitdump::report {
namespace {

// Beyond the estimate, for the gzip header and trailer and a small input's poor ratio.
constexpr size_t kMargin = 64 * 1024;

}  // namespace

bool WriteGzip(std::string_view bytes, int level, std::ostream& out) {
  struct FreeCompressor {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  const std::unique_ptr<libdeflate_compressor, FreeCompressor> compressor(libdeflate_alloc_compressor(level));
  if (!compressor) return false;
  // First into room for a quarter of the input plus a margin (a profile's encoded bytes deflate
  // to about a fifth): a block that size fits in memory the report freed earlier, where the
  // worst case's bound (more than the input) comes from fresh pages at the heap's top, which the
  // kernel must zero. libdeflate says 0 when the output does not fit: then the bound.
  const size_t bound = libdeflate_gzip_compress_bound(compressor.get(), bytes.size());
  size_t room = std::min(bound, bytes.size() / 4 + kMargin);
  std::unique_ptr<char[]> buffer;
  size_t size = 0;
  while (size == 0) {
    buffer.reset(new (std::nothrow) char[room]);
    if (!buffer) return false;
    size = libdeflate_gzip_compress(compressor.get(), bytes.data(), bytes.size(), buffer.get(), room);
    if (size == 0 && room == bound) return false;
    room = bound;
  }
  return static_cast<bool>(out.write(buffer.get(), static_cast<std::streamsize>(size)));
}

}  // namespace jitdump::report
