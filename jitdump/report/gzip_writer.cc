#include "jitdump/report/gzip_writer.h"

namespace jitdump::report {

GzipWriter::GzipWriter(std::ostream& out, int level) : out_(out) {
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream; memLevel 8 is zlib's
  // default (what protobuf's GzipOutputStream, which wrote these files before, asks for too).
  ok_ = deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipWriter::~GzipWriter() { deflateEnd(&zs_); }

bool GzipWriter::Deflate(int flush) {
  for (;;) {
    zs_.next_out = reinterpret_cast<Bytef*>(buffer_);
    zs_.avail_out = sizeof buffer_;
    const int rc = deflate(&zs_, flush);
    if (rc == Z_STREAM_ERROR) return ok_ = false;
    const size_t produced = sizeof buffer_ - zs_.avail_out;
    if (produced != 0 && !out_.write(buffer_, static_cast<std::streamsize>(produced))) return ok_ = false;
    if (flush == Z_FINISH ? rc == Z_STREAM_END : zs_.avail_out != 0) return true;
  }
}

bool GzipWriter::Write(std::string_view bytes) {
  if (!ok_) return false;
  while (!bytes.empty()) {
    // avail_in is 32 bits wide: hand over at most 1 GiB at a time.
    const size_t piece = bytes.size() < (1u << 30) ? bytes.size() : (1u << 30);
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs_.avail_in = static_cast<uInt>(piece);
    if (!Deflate(Z_NO_FLUSH)) return false;
    bytes.remove_prefix(piece);
  }
  return true;
}

bool GzipWriter::Finish() {
  if (!ok_) return false;
  zs_.next_in = nullptr;
  zs_.avail_in = 0;
  return Deflate(Z_FINISH);
}

}  // namespace jitdump::report
