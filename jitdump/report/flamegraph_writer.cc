#include "jitdump/report/flamegraph_writer.h"

#include <string>
#include <string_view>

#include "jitdump/report/flamegraph_assets.h"
#include "jitdump/report/flamegraph_data.h"
#include "jitdump/report/flamegraph_tree.h"
#include "jitdump/report/profile_check.h"

namespace jitdump::report {
namespace {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// The skeleton's markers, in the order they appear. Each is replaced by what the page needs
// there; the style and scripts are embedded files (flamegraph_writer_test checks that none holds
// "</style" or "</script", which would end its element early).
void WritePage(const Profile& profile, const FlameTree& tree, const FlameGraphOptions& options, std::ostream& out) {
  std::string_view page = flamegraph_assets::Page();
  while (!page.empty()) {
    const size_t open = page.find("{{");
    const size_t close = open == std::string_view::npos ? open : page.find("}}", open);
    if (close == std::string_view::npos) {
      out << page;
      return;
    }
    out << page.substr(0, open);
    const std::string_view marker = page.substr(open + 2, close - open - 2);
    if (marker == "TITLE") {
      out << HtmlEscape(options.title);
    } else if (marker == "STYLE") {
      out << flamegraph_assets::Style();
    } else if (marker == "MODEL_SCRIPT") {
      out << flamegraph_assets::ModelScript();
    } else if (marker == "VIEW_SCRIPT") {
      out << flamegraph_assets::ViewScript();
    } else if (marker == "PAGE_SCRIPT") {
      out << flamegraph_assets::PageScript();
    } else if (marker == "DATA") {
      WriteFlameGraphData(profile, tree, options, out);
    } else {
      out << page.substr(open, close + 2 - open);  // not a marker: text that happens to hold "{{"
    }
    page.remove_prefix(close + 2);
  }
}

}  // namespace

Status WriteFlameGraphHtml(const Profile& profile, const FlameGraphOptions& options, std::ostream& out,
                           const CheckedOrder* checked) {
  CheckedOrder checked_here;
  if (Status status = CheckedOrder::Ensure(profile, checked, &checked_here); !status.ok()) return status;
  const FlameTree tree = BuildFlameTree(profile, options, &checked->by_path());
  WritePage(profile, tree, options, out);
  if (!out.flush()) return Status::Error("flame graph: writing the page failed", 0);
  return Status::Ok();
}

}  // namespace jitdump::report
