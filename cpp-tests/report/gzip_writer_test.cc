// WriteGzip streams one gzip member through a small buffer: what it writes inflates back to the
// input (read by protobuf's GzipInputStream, zlib underneath: gunzip.h) at every level, whatever
// the input compresses to.
#include "jitdump/report/gzip_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "cpp-tests/report/gunzip.h"

namespace jitdump::report {
namespace {

using testing::Gunzip;

std::string Written(const std::string& input, int level = kGzipLevel) {
  std::ostringstream out;
  EXPECT_TRUE(WriteGzip(input, level, out)) << level;
  return out.str();
}

TEST(GzipWriterTest, CompressibleInputAtEveryLevel) {
  std::string input;
  for (int i = 0; input.size() < 4'000'000; ++i) input += "frame_" + std::to_string(i % 5000) + ";";
  for (int level = 0; level <= 3; ++level) {
    const std::string written = Written(input, level);
    EXPECT_LT(written.size(), input.size() / (level == 0 ? 2 : 4)) << level;  // level 0: the fastest, weakest
    EXPECT_EQ(Gunzip(written), input) << level;
  }
}

TEST(GzipWriterTest, IncompressibleInputSpansManyChunks) {
  // Random bytes do not shrink: the output is larger than the input, written chunk by chunk.
  std::mt19937_64 random(42);
  std::string input(3'000'000, '\0');
  for (char& c : input) c = static_cast<char>(random());
  const std::string written = Written(input);
  EXPECT_GE(written.size(), input.size());
  EXPECT_EQ(Gunzip(written), input);
}

TEST(GzipWriterTest, SmallAndEmptyInputs) {
  for (const std::string& input : {std::string(), std::string("x"), std::string(70'000, 'a')}) {
    const std::string written = Written(input);
    ASSERT_GE(written.size(), 18u);  // a gzip member's header and trailer at least
    EXPECT_EQ(static_cast<unsigned char>(written[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(written[1]), 0x8b);
    EXPECT_EQ(Gunzip(written), input) << input.size();
  }
}

TEST(GzipWriterTest, LevelOutOfRangeAndFailedStream) {
  std::ostringstream out;
  EXPECT_FALSE(WriteGzip("abc", 4, out));
  EXPECT_FALSE(WriteGzip("abc", -1, out));
  std::ostringstream failed;
  failed.setstate(std::ios::badbit);
  EXPECT_FALSE(WriteGzip(std::string(100'000, 'z'), kGzipLevel, failed));
}

}  // namespace
}  // namespace jitdump::report
