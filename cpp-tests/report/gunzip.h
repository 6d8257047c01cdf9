// The bytes a gzip stream inflates to, read by protobuf's GzipInputStream (zlib underneath): how
// the report's unit tests read what WriteGzip and the pprof writer wrote, through another
// implementation than the one that wrote it.
#pragma once

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <string>

namespace jitdump::report::testing {

inline std::string Gunzip(const std::string& written) {
  google::protobuf::io::ArrayInputStream raw(written.data(), static_cast<int>(written.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  std::string bytes;
  const void* data = nullptr;
  int size = 0;
  while (gzip.Next(&data, &size)) bytes.append(static_cast<const char*>(data), static_cast<size_t>(size));
  return bytes;
}

}  // namespace jitdump::report::testing
