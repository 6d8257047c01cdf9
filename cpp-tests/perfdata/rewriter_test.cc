// Renaming MMAP file names in a copy of a recording (what `jitdump retarget-markers` and
// scripts/bin/collect do): the renamed records read back with their new names and trailers, every
// other record and feature is the same, the file format's data size and feature offsets follow
// the change, a -z recording comes out decompressed, a stream stays a stream, and damaged input
// is refused.
#include "jitdump/perfdata/rewriter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpp-tests/perfdata/perf_data_builder.h"
#include "jitdump/perfdata/reader.h"

namespace jitdump::perfdata {
namespace {

using testing::IdFields;
using testing::PerfDataBuilder;
using testing::SampleFields;

class Files {
 public:
  Files() {
    char in[] = "/tmp/rewriter-in.XXXXXX";
    char out[] = "/tmp/rewriter-out.XXXXXX";
    in_fd_ = mkstemp(in);
    out_fd_ = mkstemp(out);
    in_ = in;
    out_ = out;
  }
  ~Files() {
    close(in_fd_);
    close(out_fd_);
    unlink(in_.c_str());
    unlink(out_.c_str());
  }
  void Input(const std::vector<uint8_t>& bytes) { ASSERT_EQ(write(in_fd_, bytes.data(), bytes.size()), ssize_t(bytes.size())); }
  int in_fd() const { return in_fd_; }
  int out_fd() const { return out_fd_; }
  const std::string& out() const { return out_; }

 private:
  int in_fd_, out_fd_;
  std::string in_, out_;
};

struct Seen : RecordSink {
  std::vector<std::string> names;
  std::vector<uint64_t> mmap_times;
  size_t samples = 0;
  void OnMmap(const Mmap& m) override {
    names.emplace_back(m.filename);
    mmap_times.push_back(m.sample_id.time);
  }
  void OnSample(const Sample&) override { ++samples; }
};

PerfDataBuilder Recording() {
  PerfDataBuilder b;
  b.AddEvent(kSampleIp | kSampleTid | kSampleTime | kSamplePeriod | kSampleCallchain, {}, "cpu-clock");
  b.Mmap2(100, 0x7f0000000000, 0x1000, 0, "/tmp/jit-1.dump", IdFields{100, 100, 5, 0});
  b.Mmap2(200, 0x7f0000000000, 0x1000, 0, "/tmp/jit-1.dump", IdFields{200, 200, 6, 0});
  b.Mmap2(100, 0x400000, 0x1000, 0, "/usr/bin/java", IdFields{100, 100, 7, 0});
  for (uint64_t t = 10; t < 40; ++t) {
    SampleFields f;
    f.pid = f.tid = 100;
    f.time = t;
    f.callchain = {0x400010, 0x400020};
    b.Sample(0, f);
  }
  b.SetString(kFeatHostname, "host-a");
  return b;
}

const RenameMmap kRenamePid100 = [](uint32_t pid, std::string_view name) -> std::optional<std::string> {
  if (pid == 100 && name == "/tmp/jit-1.dump") return std::string("/srv/collected/a-much-longer-directory/jit-100.dump");
  return std::nullopt;
};

std::unique_ptr<Seen> ReadBack(const std::string& path, std::string* hostname = nullptr) {
  std::string error;
  auto reader = PerfDataReader::Open(path, &error);
  EXPECT_TRUE(reader) << error;
  auto seen = std::make_unique<Seen>();
  if (!reader) return seen;
  reader->Read(*seen);
  EXPECT_TRUE(reader->warnings().empty()) << reader->warnings()[0];
  if (hostname) *hostname = reader->recording().features.hostname;
  return seen;
}

TEST(Rewriter, RenamesMarkersAndMovesTheFeatures) {
  Files files;
  files.Input(Recording().File());
  RewriteStats stats;
  std::string error;
  ASSERT_TRUE(RewriteMmapNames(files.in_fd(), files.out_fd(), kRenamePid100, &stats, &error)) << error;
  EXPECT_EQ(stats.renamed, 1u);
  std::string hostname;
  const auto seen = ReadBack(files.out(), &hostname);
  EXPECT_EQ(seen->names, (std::vector<std::string>{"/srv/collected/a-much-longer-directory/jit-100.dump",
                                                    "/tmp/jit-1.dump", "/usr/bin/java"}));
  EXPECT_EQ(seen->mmap_times, (std::vector<uint64_t>{5, 6, 7}));  // the trailers came along
  EXPECT_EQ(seen->samples, 30u);
  EXPECT_EQ(hostname, "host-a");  // the feature sections moved with the longer data
}

TEST(Rewriter, CompressedComesOutDecompressed) {
  PerfDataBuilder b = Recording();
  b.CompressFrom(0, false, 64);
  Files files;
  files.Input(b.File());
  RewriteStats stats;
  std::string error;
  ASSERT_TRUE(RewriteMmapNames(files.in_fd(), files.out_fd(), kRenamePid100, &stats, &error)) << error;
  EXPECT_GT(stats.decompressed, 0u);
  EXPECT_EQ(stats.renamed, 1u);
  const auto seen = ReadBack(files.out());
  EXPECT_EQ(seen->names[0], "/srv/collected/a-much-longer-directory/jit-100.dump");
  EXPECT_EQ(seen->samples, 30u);
}

TEST(Rewriter, AStreamStaysAStream) {
  Files files;
  files.Input(Recording().Pipe());
  RewriteStats stats;
  std::string error;
  ASSERT_TRUE(RewriteMmapNames(files.in_fd(), files.out_fd(), kRenamePid100, &stats, &error)) << error;
  std::string e;
  auto reader = PerfDataReader::Open(files.out(), &e);
  ASSERT_TRUE(reader) << e;
  EXPECT_TRUE(reader->recording().pipe);
  Seen seen;
  reader->Read(seen);
  EXPECT_EQ(seen.names[0], "/srv/collected/a-much-longer-directory/jit-100.dump");
  EXPECT_EQ(reader->recording().features.hostname, "host-a");
}

TEST(Rewriter, RefusesDamage) {
  std::vector<uint8_t> file = Recording().File();
  const size_t data = PerfDataBuilder::kHeaderSize + PerfDataBuilder::kAttrSize + 16;
  file[data + 6] = file[data + 7] = 0;  // the first record's size
  Files files;
  files.Input(file);
  RewriteStats stats;
  std::string error;
  EXPECT_FALSE(RewriteMmapNames(files.in_fd(), files.out_fd(), kRenamePid100, &stats, &error));
  EXPECT_NE(error.find("offset " + std::to_string(data)), std::string::npos) << error;
  Files other;
  other.Input(std::vector<uint8_t>(300, 'x'));
  EXPECT_FALSE(RewriteMmapNames(other.in_fd(), other.out_fd(), kRenamePid100, &stats, &error));
}

}  // namespace
}  // namespace jitdump::perfdata
