// The HTML page as text: self-contained (nothing that could make a request), every marker
// filled, names escaped so none can break out of its element, and the embedded data parsing as
// the tree it came from. The page's behaviour in a real browser is test_flamegraph_browser.py.
#include "jitdump/report/flamegraph_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cpp-tests/report/test_profiles.h"
#include "jitdump/report/flamegraph_assets.h"
#include "jitdump/report/flamegraph_tree.h"

namespace jitdump::report {
namespace {

std::string Page(const Profile& profile, const FlameGraphOptions& options = {}) {
  std::ostringstream out;
  const Status status = WriteFlameGraphHtml(profile, options, out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out.str();
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

TEST(FlameGraphWriterTest, AssetsCannotEndTheirElementsEarly) {
  EXPECT_EQ(flamegraph_assets::Style().find("</style"), std::string_view::npos);
  EXPECT_EQ(flamegraph_assets::Script().find("</script"), std::string_view::npos);
  EXPECT_EQ(flamegraph_assets::Script().find("<!--"), std::string_view::npos);
  EXPECT_GT(flamegraph_assets::Script().size(), 1000u);
}

TEST(FlameGraphWriterTest, PageIsSelfContained) {
  const std::string page = Page(testing::InlineDemoProfile());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Every marker was replaced.
  for (const char* marker : {"{{TITLE}}", "{{STYLE}}", "{{SCRIPT}}", "{{DATA}}"}) {
    EXPECT_EQ(page.find(marker), std::string::npos) << marker;
  }
  // Nothing that loads from elsewhere: no URL scheme but data:, no src/href but the data: icon,
  // no @import or url() in the style.
  EXPECT_FALSE(std::regex_search(page, std::regex("https?:|//[a-z0-9.-]+\\.[a-z]{2,}/", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex("\\ssrc\\s*=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(page, std::regex("@import|url\\(|fetch\\(|XMLHttpRequest|WebSocket|import\\(")));
  std::smatch href;
  const std::string::const_iterator begin = page.begin();
  for (auto it = begin; std::regex_search(it, page.end(), href, std::regex("href\\s*=\\s*\"([^\"]*)\""));
       it = href[0].second) {
    EXPECT_EQ(href[1].str().rfind("data:", 0), 0u) << href[1];
  }
  // The content security policy forbids any fetch the page might still attempt.
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // Exactly two script elements: the data (not executed) and the page's script.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);
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
  EXPECT_EQ(data["version"], 1);
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
  ASSERT_EQ(nodes["frame"].size(), tree.nodes.size());
  int64_t depth = 0;
  size_t more = 0;
  size_t single_line_nodes = 0;
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const FlameNode& node = tree.nodes[i];
    depth += nodes["depth"][i].get<int64_t>();
    EXPECT_EQ(nodes["frame"][i], node.frame);
    EXPECT_EQ(depth, node.depth);
    EXPECT_EQ(nodes["total"][i], node.total);
    const int64_t code = nodes["line"][i].get<int64_t>();
    if (node.line_count == 0) {
      EXPECT_EQ(code, 0);
    } else if (code > 0) {  // one line holding every sample
      ++single_line_nodes;
      ASSERT_EQ(node.line_count, 1u);
      EXPECT_EQ(code, tree.lines[node.first_line].line);
      EXPECT_EQ(tree.lines[node.first_line].samples, node.total);
    } else {
      ASSERT_EQ(-code, node.line_count);
      for (uint32_t l = 0; l < node.line_count; ++l, ++more) {
        EXPECT_EQ(nodes["more_line"][more], tree.lines[node.first_line + l].line);
        EXPECT_EQ(nodes["more_samples"][more], tree.lines[node.first_line + l].samples);
      }
    }
  }
  EXPECT_EQ(nodes["more_line"].size(), more);
  EXPECT_EQ(nodes["more_samples"].size(), more);
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
