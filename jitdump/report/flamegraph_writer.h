// The HTML flame graph: one self-contained page (its script, style and data inline; no request
// of any kind) that opens offline in any browser, drawn on a canvas from the aggregated call tree.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "jitdump/report/flamegraph_options.h"
#include "jitdump/report/profile.h"
#include "jitdump/report/profile_check.h"
#include "jitdump/format/status.h"

namespace jitdump::report {

// Writes the page for `profile` to `out`. Errors: a profile with dangling indexes
// (CheckProfile), or a failed write. `checked`: the profile's CheckedOrder when the caller has it.
Status WriteFlameGraphHtml(const Profile& profile, const FlameGraphOptions& options, std::ostream& out,
                           const CheckedOrder* checked = nullptr);

}  // namespace jitdump::report
