// perf-<pid>.map kept correct over time. New code is appended as it arrives, so a profiler
// reading mid-run sees it; when enough entries have gone stale (their code was unloaded) and
// at exit, the file is rewritten aside and renamed over the old one, so a reader at any moment
// sees either the old or the new complete file, never a mix. Writer thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "jitdump/write/safe_file.h"
#include "jitdump/format/status.h"

namespace jitdump_agent {

class PerfMapFile {
 public:
  PerfMapFile() = default;
  ~PerfMapFile();
  PerfMapFile(const PerfMapFile&) = delete;
  PerfMapFile& operator=(const PerfMapFile&) = delete;

  // Creates `name` (perf-<pid>.map) in `dir`, which it holds from now on: the compaction's
  // temporary file and its rename go through that descriptor, never through the path.
  jitdump::Status Open(jitdump::HeldDirectory dir, const std::string& name, const jitdump::CreateRules& rules);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  void Add(uint64_t start, uint64_t size, std::string_view name);
  // `count` lines now describe code that is gone.
  void MarkStale(uint64_t count) { stale_ += count; }
  // Writes buffered lines; returns the number written, or -1 on error (errno set), after
  // which the file ends on its last whole line again and the buffered lines are dropped.
  long Flush();
  // Stale lines (code since unloaded) are removed within about a second, or at once when they
  // pile up, so a reader never sees an old method at a reused address for long.
  bool WantsCompaction(uint64_t now_ns) const {
    return stale_ > 0 && (stale_ >= 4096 || now_ns - last_compaction_ns_ >= 1000000000ull);
  }

  // Rewrites the file with exactly the entries `for_each_live` produces (it calls the given
  // function once per live entry, in address order).
  using LiveVisitor = std::function<void(uint64_t, uint64_t, std::string_view)>;
  jitdump::Status Compact(const std::function<void(const LiveVisitor&)>& for_each_live, uint64_t now_ns);
  void Close();
  // Closes and removes the file (abandoned at start-up, before any line).
  void Discard();

  uint64_t lines() const { return lines_; }

 private:
  jitdump::HeldDirectory dir_;
  std::string name_;
  std::string path_;
  mode_t mode_ = 0600;
  int fd_ = -1;
  std::string buffer_;
  uint64_t size_ = 0;   // bytes of whole lines in the file (what a failed write is cut back to)
  uint64_t lines_ = 0;  // lines in the file now
  uint64_t stale_ = 0;  // of which describe unloaded code
  uint64_t last_compaction_ns_ = 0;
};

}  // namespace jitdump_agent
