// The flame graph page's files (jitdump/report/flamegraph/), embedded at build time by embed.py.
#pragma once

#include <string_view>

namespace jitdump::report::flamegraph_assets {

std::string_view Page();    // page.html: the skeleton, with {{TITLE}}, {{STYLE}}, {{SCRIPT}}, {{DATA}}
std::string_view Style();   // flamegraph.css
std::string_view Script();  // flamegraph.js

}  // namespace jitdump::report::flamegraph_assets
