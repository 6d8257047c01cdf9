#include "jitdump/report/gzip_writer.h"

#include <libdeflate.h>

#include <memory>
#include <new>

namespace jitdump::report {

bool WriteGzip(std::string_view bytes, int level, std::ostream& out) {
  struct FreeCompressor {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  const std::unique_ptr<libdeflate_compressor, FreeCompressor> compressor(libdeflate_alloc_compressor(level));
  if (!compressor) return false;
  // Room for the worst case (incompressible input): only the pages the output reaches are touched.
  const size_t bound = libdeflate_gzip_compress_bound(compressor.get(), bytes.size());
  const std::unique_ptr<char[]> buffer(new (std::nothrow) char[bound]);
  if (!buffer) return false;
  const size_t size = libdeflate_gzip_compress(compressor.get(), bytes.data(), bytes.size(), buffer.get(), bound);
  if (size == 0) return false;
  return static_cast<bool>(out.write(buffer.get(), static_cast<std::streamsize>(size)));
}

}  // namespace jitdump::report
