// The HTML page as text: self-contained (nothing that could make a request), every marker
// filled, names escaped so none can break out of its element, and the embedded data parsing as
// the tree it came from. The page's behaviour in a real browser is test_flamegraph_browser.py.
#include "jitdump/report/flamegraph_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cpp-tests/report/test_profiles.h"
#include "jitdump/report/flamegraph_assets.h"
#include "jitdump/report/flamegraph_data.h"
#include "jitdump/report/flamegraph_tree.h"

namespace jitdump::report {
namespace {

std::string Page(const Profile& profile, const FlameGraphOptions& options = {}) {
  std::ostringstream out;
  const Status status = WriteFlameGraphHtml(profile, options, out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out.str();
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The text between <script type="application/json" id="profile-data"> and its </script>.
std::string DataOf(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"profile-data\">";
  const size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  if (from == std::string::npos) return "{}";
  const size_t start = from + open.size();
  const size_t end = page.find("</script>", start);
  EXPECT_NE(end, std::string::npos);
  return page.substr(start, end - start);
}

// Decodes a packed column (flamegraph_data.h) the way the page does.
std::vector<int64_t> Unpack(const std::string& text, bool is_signed) {
  const std::string_view alphabet(kPackAlphabet);
  std::vector<int64_t> out;
  uint64_t value = 0;
  int shift = 0;
  for (char c : text) {
    const size_t digit = alphabet.find(c);
    EXPECT_NE(digit, std::string_view::npos) << c;
    value |= static_cast<uint64_t>(digit & 31) << shift;
    shift += 5;
    if (digit >= 32) continue;
    out.push_back(!is_signed ? static_cast<int64_t>(value)
                  : (value & 1) ? -static_cast<int64_t>((value + 1) / 2) : static_cast<int64_t>(value / 2));
    value = 0;
    shift = 0;
  }
  EXPECT_EQ(shift, 0) << "column ends inside a number";
  return out;
}

// The packing rule by hand, then at its digit boundaries through a page: frames whose sample
// counts are 1 .. 2^40 come back as written.
TEST(FlameGraphWriterTest, PackedNumbersRoundTrip) {
  EXPECT_EQ(Unpack("A", false), std::vector<int64_t>{0});
  EXPECT_EQ(Unpack("f", false), std::vector<int64_t>{31});
  EXPECT_EQ(Unpack("gB", false), std::vector<int64_t>{32});
  EXPECT_EQ(Unpack("B", true), std::vector<int64_t>{-1});
  EXPECT_EQ(Unpack("C", true), std::vector<int64_t>{1});

  const std::vector<int64_t> counts = {1, 31, 32, 1023, 1024, 32767, 32768, 1LL << 40};
  ProfileBuilder b;
  int64_t all = 0;
  for (int64_t count : counts) {
    const uint32_t f = b.AddFunction("f" + std::to_string(count), "", FrameKind::kNative);
    b.AddSample({b.AddLocation(static_cast<uint64_t>(count), 0, {{f, 0}})}, 0, "", static_cast<uint64_t>(count), 0);
    all += count;
  }
  const nlohmann::json data = nlohmann::json::parse(DataOf(Page(b.Take())));
  std::vector<int64_t> totals = Unpack(data["nodes"]["total"], false);
  std::sort(totals.begin(), totals.end());
  std::vector<int64_t> expected = counts;
  expected.push_back(all);  // the root
  EXPECT_EQ(totals, expected);
}

TEST(FlameGraphWriterTest, AssetsCannotEndTheirElementsEarly) {
  EXPECT_EQ(flamegraph_assets::Style().find("</style"), std::string_view::npos);
  for (std::string_view script :
       {flamegraph_assets::ModelScript(), flamegraph_assets::ViewScript(), flamegraph_assets::PageScript()}) {
    EXPECT_EQ(script.find("</script"), std::string_view::npos);
    EXPECT_EQ(script.find("<!--"), std::string_view::npos);
    EXPECT_GT(script.size(), 1000u);
  }
}

TEST(FlameGraphWriterTest, PageIsSelfContained) {
  const std::string page = Page(testing::InlineDemoProfile());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Every marker was replaced.
  for (const char* marker : {"{{TITLE}}", "{{STYLE}}", "{{DATA}}", "{{MODEL_SCRIPT}}", "{{VIEW_SCRIPT}}",
                             "{{PAGE_SCRIPT}}"}) {
    EXPECT_EQ(page.find(marker), std::string::npos) << marker;
  }
  // Nothing that loads from elsewhere: no URL with a scheme and host, no src attribute, no
  // href but the data: icon, nothing in the style or script that fetches.
  const std::string lower = Lower(page);
  EXPECT_EQ(lower.find("://"), std::string::npos);
  for (const char* loader : {"src=", "src =", "@import", "url(", "fetch(", "xmlhttprequest", "websocket", "import(",
                             "eventsource", "sendbeacon", "worker(", "<iframe", "<object", "<embed", "<link rel=\"style"}) {
    EXPECT_EQ(lower.find(loader), std::string::npos) << loader;
  }
  size_t hrefs = 0;
  for (size_t at = lower.find("href=\""); at != std::string::npos; at = lower.find("href=\"", at + 1), ++hrefs) {
    EXPECT_EQ(lower.compare(at + 6, 5, "data:"), 0) << page.substr(at, 40);
  }
  EXPECT_EQ(hrefs, 1u);  // the icon
  // The content security policy forbids any fetch the page might still attempt.
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // Exactly four script elements: the data (not executed) and the page's three scripts.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 4u);
}

TEST(FlameGraphWriterTest, TitleIsEscapedInHtmlAndData) {
  FlameGraphOptions options;
  options.title = "a <b> & \"c\" </script>";
  const std::string page = Page(testing::InlineDemoProfile(), options);
  EXPECT_NE(page.find("<title>a &lt;b&gt; &amp; &quot;c&quot; &lt;/script&gt;</title>"), std::string::npos);
  const nlohmann::json data = nlohmann::json::parse(DataOf(page));
  EXPECT_EQ(data["title"], options.title);
}

// Java names hold '<' (<init>, <clinit>, lambda$...); a hostile one must not end the data early.
TEST(FlameGraphWriterTest, NamesCannotBreakOutOfTheDataElement) {
  ProfileBuilder b;
  const std::string evil = "x</script><script>alert(1)</script><!--";
  const uint32_t f = b.AddFunction(evil, "A.java", FrameKind::kCompiled);
  const uint32_t init = b.AddFunction("java.lang.Object.<init>()", "java/lang/Object.java", FrameKind::kInlined);
  const uint32_t bad_utf8 = b.AddFunction(std::string("bad\xff\xfe name"), "", FrameKind::kNative);
  b.AddSample({b.AddLocation(1, 0, {{init, 1}, {f, 2}}), b.AddLocation(2, 0, {{bad_utf8, 0}})},
              b.AddProcess(1, "java", ""), "main", 5, 0);
  const std::string page = Page(b.Take());
  const std::string data = DataOf(page);
  EXPECT_EQ(data.find('<'), std::string::npos);
  const nlohmann::json parsed = nlohmann::json::parse(data);
  const auto& names = parsed["frames"]["name"];
  EXPECT_NE(std::find(names.begin(), names.end(), evil), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "java.lang.Object.<init>()"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "bad\xef\xbf\xbd\xef\xbf\xbd name"), names.end());
}

// The data is the tree, column by column (flamegraph_data.h describes the format).
TEST(FlameGraphWriterTest, DataEncodesTheTree) {
  const Profile profile = testing::InlineDemoProfile();
  const FlameTree tree = BuildFlameTree(profile, FlameGraphOptions{});
  const nlohmann::json data = nlohmann::json::parse(DataOf(Page(profile)));
  EXPECT_EQ(data["version"], 2);
  EXPECT_EQ(data["total"], 1200);
  EXPECT_EQ(data["period_ns"], 250000);
  EXPECT_EQ(data["duration_ns"], 1200 * 250000);
  EXPECT_EQ(data["processes"][0]["pid"], 4242);
  EXPECT_EQ(data["processes"][0]["dump"], "/tmp/run/jit-4242.dump");
  const auto& frames = data["frames"];
  ASSERT_EQ(frames["name"].size(), tree.frames.size());
  for (size_t f = 0; f < tree.frames.size(); ++f) {
    EXPECT_EQ(frames["name"][f], tree.frames[f].name);
    EXPECT_EQ(data["files"][frames["file"][f].get<size_t>()], tree.frames[f].file);
    EXPECT_EQ(data["kinds"][frames["kind"][f].get<size_t>()], tree.frames[f].kind);
  }
  const auto& nodes = data["nodes"];
  ASSERT_EQ(nodes["count"], tree.nodes.size());
  const std::vector<int64_t> frame = Unpack(nodes["frame"], false);
  const std::vector<int64_t> depth_delta = Unpack(nodes["depth"], true);
  const std::vector<int64_t> total = Unpack(nodes["total"], false);
  const std::vector<int64_t> line = Unpack(nodes["line"], true);
  const std::vector<int64_t> more_line = Unpack(nodes["more_line"], false);
  const std::vector<int64_t> more_samples = Unpack(nodes["more_samples"], false);
  ASSERT_EQ(frame.size(), tree.nodes.size());
  ASSERT_EQ(depth_delta.size(), tree.nodes.size());
  ASSERT_EQ(total.size(), tree.nodes.size());
  ASSERT_EQ(line.size(), tree.nodes.size());
  ASSERT_EQ(more_line.size(), nodes["more_count"].get<size_t>());
  ASSERT_EQ(more_samples.size(), more_line.size());
  int64_t depth = 0;
  size_t more = 0;
  size_t single_line_nodes = 0;
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const FlameNode& node = tree.nodes[i];
    depth += depth_delta[i];
    EXPECT_EQ(frame[i], node.frame);
    EXPECT_EQ(depth, node.depth);
    EXPECT_EQ(total[i], static_cast<int64_t>(node.total));
    if (node.line_count == 0) {
      EXPECT_EQ(line[i], 0);
    } else if (line[i] > 0) {  // one line holding every sample
      ++single_line_nodes;
      ASSERT_EQ(node.line_count, 1u);
      EXPECT_EQ(line[i], tree.lines[node.first_line].line);
      EXPECT_EQ(tree.lines[node.first_line].samples, node.total);
    } else {
      ASSERT_EQ(-line[i], node.line_count);
      for (uint32_t l = 0; l < node.line_count; ++l, ++more) {
        ASSERT_LT(more, more_line.size());
        EXPECT_EQ(more_line[more], tree.lines[node.first_line + l].line);
        EXPECT_EQ(more_samples[more], static_cast<int64_t>(tree.lines[node.first_line + l].samples));
      }
    }
  }
  EXPECT_EQ(more_line.size(), more);
  EXPECT_GT(more, 0u);               // leaf(int) and main() have several lines
  EXPECT_GT(single_line_nodes, 0u);  // caller(), digest(), both mix()
}

TEST(FlameGraphWriterTest, DanglingIndexIsAnError) {
  Profile profile = testing::InlineDemoProfile();
  profile.samples[0].locations.push_back(12345);
  std::ostringstream out;
  EXPECT_FALSE(WriteFlameGraphHtml(profile, FlameGraphOptions{}, out).ok());
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace jitdump::report
