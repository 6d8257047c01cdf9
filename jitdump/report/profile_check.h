// Whether a Profile's indexes all point at something: every writer checks this first, so a
// profile built wrongly is reported as an error instead of read out of bounds.
#pragma once

#include <cstdint>
#include <vector>

#include "jitdump/report/profile.h"
#include "jitdump/format/status.h"

namespace jitdump::report {

// Ok, or an error naming the first kind of dangling index found (no errno). A profile without
// processes may leave Sample::process at 0 (the process is then unknown).
Status CheckProfile(const Profile& profile);

// A profile's samples in the order of their paths (SamplesByPath), taken once the profile passed
// CheckProfile: the writers given one neither check nor sort the samples again (each walk of
// them is a walk of every sample's locations). For the profile it was made from, unchanged since.
class CheckedOrder {
 public:
  // CheckProfile(profile), then the order; the check's error when it fails.
  static Status Of(const Profile& profile, CheckedOrder* out);
  // For a writer given `order` or not: left as it is when given, else made into `*made_here`
  // (by Of) and pointed there. The check's error when it fails.
  static Status Ensure(const Profile& profile, const CheckedOrder*& order, CheckedOrder* made_here);
  const std::vector<uint32_t>& by_path() const { return by_path_; }

 private:
  std::vector<uint32_t> by_path_;
};

}  // namespace jitdump::report
