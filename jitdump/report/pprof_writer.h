// pprof output: a Profile as a gzipped perftools.profiles.Profile (pprof's profile.proto), the
// format go tool pprof, Pyroscope, Parca, Grafana, Datadog and Google Cloud Profiler read.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "jitdump/report/profile.h"
#include "jitdump/report/profile_check.h"
#include "jitdump/format/status.h"

namespace jitdump::report {

// Writes `profile` to `out` as gzip-compressed profile.proto:
// - sample types samples/count and cpu/nanoseconds (Sample::count, Sample::nanos), period
//   cpu/nanoseconds (Profile::period_ns); the default sample type is cpu when any sample carries
//   time, samples otherwise;
// - one pprof Location per Profile location, its inline chain as Lines (innermost first, as
//   pprof expects), so pprof shows inlined frames as such;
// - labels per sample: "thread" (the thread's name) and "pid";
// - each Mapping says what is resolved in it (functions, file names, line numbers, inline
//   frames), so pprof does not try to symbolize again what the dumps already named.
// Errors: a profile with dangling indexes (CheckProfile), or a failed write.
// The samples are written in the order of their paths (stacks that share their outer frames next
// to each other compress better). `checked`: the profile's CheckedOrder when the caller has it.
Status WritePprof(const Profile& profile, std::ostream& out, const CheckedOrder* checked = nullptr);

}  // namespace jitdump::report
