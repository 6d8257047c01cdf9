// The flame graph page's files (jitdump/report/flamegraph/), embedded at build time by embed.py.
#pragma once

#include <string_view>

namespace jitdump::report::flamegraph_assets {

// page.html: the skeleton, with markers {{TITLE}}, {{STYLE}}, {{DATA}}, {{MODEL_SCRIPT}},
// {{VIEW_SCRIPT}} and {{PAGE_SCRIPT}} where the writer puts the parts below.
std::string_view Page();
std::string_view Style();        // flamegraph.css
std::string_view ModelScript();  // model.js: decoding the data, search
std::string_view ViewScript();   // view.js: drawing on the canvas, hit testing
std::string_view PageScript();   // page.js: the controls, run last

}  // namespace jitdump::report::flamegraph_assets
