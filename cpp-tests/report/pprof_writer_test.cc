// The pprof writer, read back with the protobuf classes generated from pprof's own profile.proto:
// the fields pprof's readers depend on (string table, sample types, ids, inline chains as Lines,
// mapping flags, labels). go tool pprof itself reads the same output in test_pprof_consumer.py.
#include "jitdump/report/pprof_writer.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cpp-tests/report/gunzip.h"
#include "cpp-tests/report/test_profiles.h"
#include "jitdump/report/sample_order.h"
#include "profile.pb.h"

namespace jitdump::report {
namespace {

namespace pb = perftools::profiles;
using testing::Gunzip;

pb::Profile Decode(const std::string& bytes) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  pb::Profile profile;
  EXPECT_TRUE(profile.ParseFromZeroCopyStream(&gzip));
  return profile;
}

pb::Profile Written(const Profile& profile) {
  std::ostringstream out;
  const Status status = WritePprof(profile, out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  const std::string bytes = out.str();
  // gzip's magic: pprof sniffs it to decide whether to decompress.
  EXPECT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  return Decode(bytes);
}

std::string Str(const pb::Profile& p, int64_t index) {
  EXPECT_GE(index, 0);
  EXPECT_LT(index, p.string_table_size());
  return index >= 0 && index < p.string_table_size() ? p.string_table(static_cast<int>(index)) : "?";
}

const pb::Function& FunctionById(const pb::Profile& p, uint64_t id) {
  for (const pb::Function& f : p.function()) {
    if (f.id() == id) return f;
  }
  ADD_FAILURE() << "no function " << id;
  return p.function(0);
}

const pb::Location& LocationById(const pb::Profile& p, uint64_t id) {
  for (const pb::Location& l : p.location()) {
    if (l.id() == id) return l;
  }
  ADD_FAILURE() << "no location " << id;
  return p.location(0);
}

TEST(PprofWriterTest, HeaderNamesSampleTypesPeriodAndDuration) {
  const pb::Profile p = Written(testing::InlineDemoProfile());
  ASSERT_GT(p.string_table_size(), 0);
  EXPECT_EQ(p.string_table(0), "");  // pprof rejects a table whose entry 0 is not ""
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(Str(p, p.sample_type(0).type()), "samples");
  EXPECT_EQ(Str(p, p.sample_type(0).unit()), "count");
  EXPECT_EQ(Str(p, p.sample_type(1).type()), "cpu");
  EXPECT_EQ(Str(p, p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(Str(p, p.period_type().type()), "cpu");
  EXPECT_EQ(Str(p, p.period_type().unit()), "nanoseconds");
  EXPECT_EQ(p.period(), 250000);
  EXPECT_EQ(Str(p, p.default_sample_type()), "cpu");
  EXPECT_EQ(p.duration_nanos(), 1200 * 250000);
  EXPECT_EQ(p.time_nanos(), 0);  // perf's clock is not the wall clock pprof means
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_EQ(Str(p, p.comment(0)), "pid 4242 java dump /tmp/run/jit-4242.dump");
}

TEST(PprofWriterTest, SamplesKeepCountsTimeAndLabels) {
  const Profile model = testing::InlineDemoProfile();
  const pb::Profile p = Written(model);
  ASSERT_EQ(p.sample_size(), static_cast<int>(model.samples.size()));
  const std::vector<uint32_t> order = SamplesByPath(model);  // the order samples are written in
  for (int i = 0; i < p.sample_size(); ++i) {
    const pb::Sample& s = p.sample(i);
    const Sample& expected = model.samples[order[i]];
    ASSERT_EQ(s.location_id_size(), static_cast<int>(expected.locations.size()));
    for (int k = 0; k < s.location_id_size(); ++k) {
      EXPECT_EQ(LocationById(p, s.location_id(k)).address(), model.locations[expected.locations[k]].address);
    }
    ASSERT_EQ(s.value_size(), 2);
    EXPECT_EQ(s.value(0), static_cast<int64_t>(expected.count));
    EXPECT_EQ(s.value(1), static_cast<int64_t>(expected.nanos));
    ASSERT_EQ(s.label_size(), 2);
    EXPECT_EQ(Str(p, s.label(0).key()), "thread");
    EXPECT_EQ(Str(p, s.label(0).str()), model.threads[expected.thread]);
    EXPECT_EQ(Str(p, s.label(1).key()), "pid");
    EXPECT_EQ(s.label(1).num(), 4242);
  }
}

// A sample's location ids are most of a profile's bytes: the locations most samples name get the
// smallest ids (the shortest varints), ties in the profile's order, and the locations are written in
// the order of their ids.
TEST(PprofWriterTest, MostNamedLocationsGetTheSmallestIds) {
  ProfileBuilder b;
  const uint32_t once = b.AddLocation(0x10, 0, {});
  const uint32_t twice = b.AddLocation(0x20, 0, {});
  const uint32_t everywhere = b.AddLocation(0x30, 0, {});
  const uint32_t also_twice = b.AddLocation(0x40, 0, {});
  const uint32_t process = b.AddProcess(1, "a", "");
  b.AddSample({everywhere, once}, process, "t", 1, 0);
  b.AddSample({everywhere, twice, also_twice}, process, "u", 1, 0);
  b.AddSample({twice, everywhere, also_twice}, process, "v", 1, 0);
  const pb::Profile p = Written(b.Take());
  ASSERT_EQ(p.location_size(), 4);
  const uint64_t expected[] = {0x30, 0x20, 0x40, 0x10};  // by id
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.location(i).id(), static_cast<uint64_t>(i) + 1);
    EXPECT_EQ(p.location(i).address(), expected[i]) << "id " << i + 1;
  }
  ASSERT_EQ(p.sample_size(), 3);
  EXPECT_EQ(std::vector<uint64_t>(p.sample(2).location_id().begin(), p.sample(2).location_id().end()),
            (std::vector<uint64_t>{2, 1, 3}));
}

// The first sample's caller frame is caller() inlined into main(): one Location, two Lines,
// innermost first, each naming its function and file.
TEST(PprofWriterTest, InlineChainIsOneLocationWithLinesInnermostFirst) {
  const pb::Profile p = Written(testing::InlineDemoProfile());
  const pb::Location& call = LocationById(p, p.sample(0).location_id(1));
  EXPECT_EQ(call.address(), 0x7f000000203fu);
  ASSERT_EQ(call.line_size(), 2);
  EXPECT_EQ(Str(p, FunctionById(p, call.line(0).function_id()).name()), "demo.Inline.caller()");
  EXPECT_EQ(call.line(0).line(), 20);
  EXPECT_EQ(Str(p, FunctionById(p, call.line(1).function_id()).name()), "demo.Inline.main(java.lang.String[])");
  EXPECT_EQ(call.line(1).line(), 31);
  EXPECT_EQ(Str(p, FunctionById(p, call.line(0).function_id()).filename()), "demo/Inline.java");

  const pb::Location& leaf = LocationById(p, p.sample(0).location_id(0));
  ASSERT_EQ(leaf.line_size(), 1);
  EXPECT_EQ(Str(p, FunctionById(p, leaf.line(0).function_id()).name()), "demo.Inline.leaf(int)");
  EXPECT_EQ(leaf.line(0).line(), 12);
}

TEST(PprofWriterTest, IdsAreNonZeroAndEveryReferenceResolves) {
  const pb::Profile p = Written(testing::InlineDemoProfile());
  for (const pb::Function& f : p.function()) {
    EXPECT_NE(f.id(), 0u);
    EXPECT_EQ(f.system_name(), 0);  // so pprof keeps the name as is (see the writer)
  }
  for (const pb::Location& l : p.location()) {
    EXPECT_NE(l.id(), 0u);
    bool mapped = l.mapping_id() == 0;
    for (const pb::Mapping& m : p.mapping()) mapped = mapped || m.id() == l.mapping_id();
    EXPECT_TRUE(mapped) << "location " << l.id() << " mapping " << l.mapping_id();
    for (const pb::Line& line : l.line()) FunctionById(p, line.function_id());
  }
  for (const pb::Sample& s : p.sample()) {
    for (uint64_t id : s.location_id()) LocationById(p, id);
  }
}

// A mapping marked as resolved is not symbolized again by pprof from the binary on disk (the
// JIT code is gone, and perf's names for libjvm are the ones the report used).
TEST(PprofWriterTest, MappingsSayWhatIsResolved) {
  const pb::Profile p = Written(testing::InlineDemoProfile());
  ASSERT_EQ(p.mapping_size(), 4);  // Profile::mappings[0] ("no mapping") is not written
  const pb::Mapping& jit = p.mapping(0);
  EXPECT_EQ(jit.id(), 1u);
  EXPECT_EQ(Str(p, jit.filename()), "[jit] jit-4242.dump");
  EXPECT_EQ(jit.memory_start(), 0x7f0000000000u);
  EXPECT_EQ(jit.memory_limit(), 0x7f0001000000u);
  EXPECT_TRUE(jit.has_functions());
  EXPECT_TRUE(jit.has_filenames());
  EXPECT_TRUE(jit.has_line_numbers());
  EXPECT_TRUE(jit.has_inline_frames());
  const pb::Mapping& kernel = p.mapping(3);
  EXPECT_EQ(Str(p, kernel.filename()), "[kernel.kallsyms]");
  EXPECT_TRUE(kernel.has_functions());
  EXPECT_FALSE(kernel.has_filenames());
  EXPECT_FALSE(kernel.has_line_numbers());
}

TEST(PprofWriterTest, MappingWithoutNamesIsLeftForPprofToSymbolize) {
  ProfileBuilder b;
  const uint32_t lib = b.AddMapping("/usr/lib/libfoo.so", 0x1000, 0x2000, 0);
  b.AddSample({b.AddLocation(0x1234, lib, {})}, b.AddProcess(1, "a", ""), "t", 1, 0);
  const pb::Profile p = Written(b.Take());
  ASSERT_EQ(p.mapping_size(), 1);
  EXPECT_FALSE(p.mapping(0).has_functions());
  EXPECT_EQ(p.location(0).line_size(), 0);
  EXPECT_EQ(Str(p, p.default_sample_type()), "samples");  // no sample carries time
}

// pprof takes the first mapping for the profiled program (its header's "File:"): the sampled
// JVM's executable, not the DSO a sample met first (ld.so, the kernel).
TEST(PprofWriterTest, FirstMappingIsTheSampledJvmsExecutable) {
  ProfileBuilder b;
  const uint32_t ld = b.AddMapping("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0, 0, 0);
  const uint32_t kernel = b.AddMapping("[kernel.kallsyms]", 0, 0, 0);
  const uint32_t java = b.AddMapping("/usr/lib/jvm/java-17/bin/java", 0, 0, 0);
  const uint32_t shell = b.AddProcess(7, "sh", "");
  b.profile().processes[shell].executable = "/usr/bin/dash";
  const uint32_t jvm = b.AddProcess(8, "java", "/tmp/jit-8.dump");
  b.profile().processes[jvm].executable = "/usr/lib/jvm/java-17/bin/java";
  const uint32_t at_ld = b.AddLocation(0x10, ld, {});
  const uint32_t at_kernel = b.AddLocation(0x20, kernel, {});
  b.AddSample({at_ld}, shell, "sh", 50, 0);  // more samples, but no JVM
  b.AddSample({at_kernel, b.AddLocation(0x30, java, {})}, jvm, "java", 3, 0);
  const pb::Profile p = Written(b.Take());
  ASSERT_EQ(p.mapping_size(), 3);
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/usr/lib/jvm/java-17/bin/java");
  EXPECT_EQ(p.mapping(0).id(), 1u);
  // Every location still names its own mapping.
  for (const pb::Location& l : p.location()) {
    std::string file;
    for (const pb::Mapping& m : p.mapping()) {
      if (m.id() == l.mapping_id()) file = Str(p, m.filename());
    }
    EXPECT_EQ(file, l.address() == 0x10 ? "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
                    : l.address() == 0x20 ? "[kernel.kallsyms]"
                                          : "/usr/lib/jvm/java-17/bin/java");
  }
}

// A JVM's launcher has no samples of its own: its executable is a mapping of its own, first.
TEST(PprofWriterTest, ExecutableWithoutSamplesStillComesFirst) {
  ProfileBuilder b;
  const uint32_t ld = b.AddMapping("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0, 0, 0);
  const uint32_t jvm = b.AddProcess(8, "java", "/tmp/jit-8.dump");
  b.profile().processes[jvm].executable = "/usr/lib/jvm/java-17/bin/java";
  b.AddSample({b.AddLocation(0x10, ld, {})}, jvm, "java", 1, 0);
  const pb::Profile p = Written(b.Take());
  ASSERT_EQ(p.mapping_size(), 2);
  EXPECT_EQ(Str(p, p.mapping(0).filename()), "/usr/lib/jvm/java-17/bin/java");
  EXPECT_EQ(p.mapping(0).id(), 1u);
  EXPECT_EQ(Str(p, p.mapping(1).filename()), "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  EXPECT_EQ(p.location(0).mapping_id(), p.mapping(1).id());
}

// The writer emits the profile in slices of a few thousand entries (concatenated messages
// merge); a profile larger than one slice must read back whole and in order.
TEST(PprofWriterTest, LargeProfileReadsBackWhole) {
  const Profile model = testing::SyntheticProfile(40000, 3, testing::SyntheticShape::kScattered);
  ASSERT_GT(model.samples.size(), 4096u);
  ASSERT_GT(model.locations.size(), 4096u);
  const pb::Profile p = Written(model);
  ASSERT_EQ(p.sample_size(), static_cast<int>(model.samples.size()));
  ASSERT_EQ(p.location_size(), static_cast<int>(model.locations.size()));
  ASSERT_EQ(p.function_size(), static_cast<int>(model.functions.size()));
  uint64_t total = 0;
  for (const pb::Sample& s : p.sample()) total += static_cast<uint64_t>(s.value(0));
  EXPECT_EQ(total, 40000u);
  for (int i = 0; i < p.location_size(); ++i) EXPECT_EQ(p.location(i).id(), static_cast<uint64_t>(i) + 1);
  const Function& last = model.functions.back();
  EXPECT_EQ(Str(p, p.function(p.function_size() - 1).name()), last.name);
  EXPECT_EQ(Str(p, p.function(p.function_size() - 1).filename()), last.file);
}

// The writer encodes profile.proto itself; its bytes are what protobuf's serializer makes of the
// same fields, section by section (the header's scalars, then samples, mappings, locations,
// functions, comments and the string table), so readers that compare or hash profiles see no
// difference from a protobuf-written one.
TEST(PprofWriterTest, BytesAreProtobufsOwnSerialization) {
  for (const Profile& model : {testing::InlineDemoProfile(), testing::SyntheticProfile(20000, 5)}) {
    std::ostringstream out;
    ASSERT_TRUE(WritePprof(model, out).ok());
    const std::string bytes = Gunzip(out.str());
    pb::Profile p;
    ASSERT_TRUE(p.ParseFromString(bytes));
    pb::Profile header;
    *header.mutable_sample_type() = p.sample_type();
    header.set_duration_nanos(p.duration_nanos());
    *header.mutable_period_type() = p.period_type();
    header.set_period(p.period());
    header.set_default_sample_type(p.default_sample_type());
    std::string expected = header.SerializeAsString();
    pb::Profile section;
    *section.mutable_sample() = p.sample();
    expected += section.SerializeAsString();
    section.Clear();
    *section.mutable_mapping() = p.mapping();
    expected += section.SerializeAsString();
    section.Clear();
    *section.mutable_location() = p.location();
    expected += section.SerializeAsString();
    section.Clear();
    *section.mutable_function() = p.function();
    expected += section.SerializeAsString();
    section.Clear();
    *section.mutable_comment() = p.comment();
    expected += section.SerializeAsString();
    section.Clear();
    *section.mutable_string_table() = p.string_table();
    expected += section.SerializeAsString();
    EXPECT_EQ(bytes.size(), expected.size());
    EXPECT_TRUE(bytes == expected) << "the encoded profile differs from protobuf's serialization";
  }
}

TEST(PprofWriterTest, DanglingIndexIsAnErrorAndWritesNothing) {
  Profile profile = testing::InlineDemoProfile();
  profile.locations[0].lines[0].function = 9999;
  std::ostringstream out;
  const Status status = WritePprof(profile, out);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("function"), std::string::npos) << status.ToString();
  EXPECT_TRUE(out.str().empty());
}

TEST(PprofWriterTest, FailedStreamIsAnError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_FALSE(WritePprof(testing::InlineDemoProfile(), out).ok());
}

}  // namespace
}  // namespace jitdump::report
