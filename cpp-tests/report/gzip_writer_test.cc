// WriteGzip compresses into room for a quarter of its input first and into libdeflate's bound
// when that is not enough: both ways the stream is one gzip member that inflates back to the
// input (read by protobuf's GzipInputStream, zlib underneath).
#include "jitdump/report/gzip_writer.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace jitdump::report {
namespace {

std::string Gunzip(const std::string& written) {
  google::protobuf::io::ArrayInputStream raw(written.data(), static_cast<int>(written.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  std::string bytes;
  const void* data = nullptr;
  int size = 0;
  while (gzip.Next(&data, &size)) bytes.append(static_cast<const char*>(data), static_cast<size_t>(size));
  return bytes;
}

std::string Written(const std::string& input) {
  std::ostringstream out;
  EXPECT_TRUE(WriteGzip(input, 1, out));
  return out.str();
}

TEST(GzipWriterTest, CompressibleInputFitsTheFirstRoom) {
  std::string input;
  for (int i = 0; input.size() < 4'000'000; ++i) input += "frame_" + std::to_string(i % 5000) + ";";
  const std::string written = Written(input);
  EXPECT_LT(written.size(), input.size() / 4);  // what the first room holds
  EXPECT_EQ(Gunzip(written), input);
}

TEST(GzipWriterTest, IncompressibleInputTakesTheBound) {
  // Random bytes do not shrink: more than a quarter of the input, so the first room is too small.
  std::mt19937_64 random(42);
  std::string input(1'000'000, '\0');
  for (char& c : input) c = static_cast<char>(random());
  const std::string written = Written(input);
  EXPECT_GT(written.size(), input.size() / 4 + 64 * 1024);
  EXPECT_EQ(Gunzip(written), input);
}

TEST(GzipWriterTest, SmallAndEmptyInputs) {
  for (const std::string& input : {std::string(), std::string("x"), std::string(70'000, 'a')}) {
    EXPECT_EQ(Gunzip(Written(input)), input) << input.size();
  }
}

}  // namespace
}  // namespace jitdump::report
