// gzip compression onto a std::ostream through zlib, fed in pieces: a writer encodes a large
// output into a buffer and hands it over every few hundred KiB, so neither the whole output nor
// its compressed form is ever held in memory.
#pragma once

#include <zlib.h>

#include <ostream>
#include <string_view>

namespace jitdump::report {

class GzipWriter {
 public:
  // `level`: zlib's 0-9 (1 fastest).
  GzipWriter(std::ostream& out, int level);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // Compresses `bytes`; false once zlib or the stream failed.
  bool Write(std::string_view bytes);
  // Ends the gzip member (trailer with CRC and size); false when anything failed.
  bool Finish();

 private:
  bool Deflate(int flush);

  std::ostream& out_;
  z_stream zs_{};
  bool ok_ = false;
  char buffer_[1 << 16];
};

}  // namespace jitdump::report
