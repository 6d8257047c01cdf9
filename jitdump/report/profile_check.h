// Whether a Profile's indexes all point at something: every writer checks this first, so a
// profile built wrongly is reported as an error instead of read out of bounds.
#pragma once

#include "jitdump/report/profile.h"
#include "jitdump/format/status.h"

namespace jitdump::report {

// Ok, or an error naming the first kind of dangling index found (no errno). A profile without
// processes may leave Sample::process at 0 (the process is then unknown).
Status CheckProfile(const Profile& profile);

}  // namespace jitdump::report
