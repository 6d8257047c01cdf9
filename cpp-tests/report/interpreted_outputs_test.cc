// Interpreted Java frames the stack walk named (kind interpreted, with a file and a line) in the
// text and pprof outputs: the per-line table gives them rows of their own, marked [interpreted]
// (apart from the same line's compiled samples), and pprof names their functions "...
// [interpreted]"; the anonymous interpreter ("Interpreter", no file) stays as it was.
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "jitdump/report/line_table.h"
#include "jitdump/report/pprof_writer.h"
#include "profile.pb.h"

namespace jitdump::report {
namespace {

// inner interpreted at line 32 (3 samples), compiled at line 32 (2), the anonymous interpreter (1).
Profile Interpreted() {
  ProfileBuilder b;
  const uint32_t process = b.AddProcess(4242, "java", "/tmp/jit-4242.dump");
  const uint32_t jit = b.AddMapping("/tmp/jit-4242.dump", 0x1000, 0x9000, 0);
  const uint32_t interpreted = b.AddMapping("[interpreted] /tmp/jit-4242.dump", 0, 0, 0);
  const uint32_t f_interpreted = b.AddFunction("p.Chain.inner", "p/Chain.java", FrameKind::kInterpreted);
  const uint32_t f_compiled = b.AddFunction("p.Chain.inner", "p/Chain.java", FrameKind::kCompiled);
  const uint32_t f_anonymous = b.AddFunction("Interpreter", "", FrameKind::kInterpreted);
  const uint32_t l_interpreted = b.AddLocation(0x7e0000001010, interpreted, {Line{f_interpreted, 32}});
  const uint32_t l_compiled = b.AddLocation(0x2000, jit, {Line{f_compiled, 32}});
  const uint32_t l_anonymous = b.AddLocation(0x1100, jit, {Line{f_anonymous, 0}});
  b.AddSample({l_interpreted}, process, "main", 3, 0);
  b.AddSample({l_compiled}, process, "main", 2, 0);
  b.AddSample({l_anonymous}, process, "main", 1, 0);
  return b.Take();
}

TEST(InterpretedOutputs, TheLineTableGivesInterpretedLinesRowsOfTheirOwn) {
  const LineTable table = BuildLineTable(Interpreted());
  EXPECT_EQ(table.samples, 6u);
  EXPECT_EQ(table.interpreted, 4u);
  EXPECT_EQ(table.interpreted_with_line, 3u);
  EXPECT_EQ(table.java, 2u);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0].key, "p/Chain.java:32");
  EXPECT_TRUE(table.rows[0].interpreted);
  EXPECT_EQ(table.rows[0].samples, 3u);
  EXPECT_EQ(table.rows[0].method, "p.Chain.inner");
  EXPECT_EQ(table.rows[1].key, "p/Chain.java:32");
  EXPECT_FALSE(table.rows[1].interpreted);
  EXPECT_EQ(table.rows[1].samples, 2u);
  EXPECT_EQ(table.rows[2].key, "[interpreter]");
  std::ostringstream text;
  WriteLineTable(table, 0, text);
  EXPECT_NE(text.str().find("interpreted: 4 (3 with a source line)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("p/Chain.java:32                          p.Chain.inner [interpreted]\n"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("p/Chain.java:32                          p.Chain.inner\n"), std::string::npos)
      << text.str();
}

TEST(InterpretedOutputs, PprofNamesInterpretedFramesSo) {
  std::ostringstream out;
  ASSERT_TRUE(WritePprof(Interpreted(), out).ok());
  const std::string bytes = out.str();
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  perftools::profiles::Profile p;
  ASSERT_TRUE(p.ParseFromZeroCopyStream(&gzip));
  std::set<std::string> names;
  for (const perftools::profiles::Function& f : p.function()) names.insert(p.string_table(f.name()));
  EXPECT_EQ(names, (std::set<std::string>{"p.Chain.inner [interpreted]", "p.Chain.inner", "Interpreter"}));
}

}  // namespace
}  // namespace jitdump::report
