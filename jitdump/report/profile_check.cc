#include "jitdump/report/profile_check.h"

#include "jitdump/report/sample_order.h"

namespace jitdump::report {

Status CheckProfile(const Profile& profile) {
  if (profile.mappings.empty()) return Status::Error("profile: mappings[0] (no mapping) is missing", 0);
  for (const Location& location : profile.locations) {
    if (location.mapping >= profile.mappings.size()) {
      return Status::Error("profile: a location names a mapping that does not exist", 0);
    }
    for (const Line& line : location.lines) {
      if (line.function >= profile.functions.size()) {
        return Status::Error("profile: a location's line names a function that does not exist", 0);
      }
    }
  }
  for (const Sample& sample : profile.samples) {
    for (uint32_t location : sample.locations) {
      if (location >= profile.locations.size()) {
        return Status::Error("profile: a sample names a location that does not exist", 0);
      }
    }
    if (sample.process >= profile.processes.size() && !(profile.processes.empty() && sample.process == 0)) {
      return Status::Error("profile: a sample names a process that does not exist", 0);
    }
    if (sample.thread >= profile.threads.size()) {
      return Status::Error("profile: a sample names a thread that does not exist", 0);
    }
  }
  return Status::Ok();
}

Status CheckedOrder::Of(const Profile& profile, CheckedOrder* out) {
  if (Status checked = CheckProfile(profile); !checked.ok()) return checked;
  out->by_path_ = SamplesByPath(profile);
  return Status::Ok();
}

Status CheckedOrder::Ensure(const Profile& profile, const CheckedOrder*& order, CheckedOrder* made_here) {
  if (order != nullptr) return Status::Ok();
  if (Status status = Of(profile, made_here); !status.ok()) return status;
  order = made_here;
  return Status::Ok();
}

}  // namespace jitdump::report
