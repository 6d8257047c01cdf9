// strip-inline's work (strip_inline.h): splitting a dump in memory, then writing both files
// aside and renaming them into place.
#include "jitdump/tool/strip_inline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "jitdump/format/dump_format.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/regular_file.h"
#include "jitdump/write/safe_file.h"

namespace jitdump::tool {
namespace {

void Append(std::vector<uint8_t>* out, std::span<const uint8_t> data, uint64_t begin, uint64_t end) {
  out->insert(out->end(), data.begin() + static_cast<ptrdiff_t>(begin), data.begin() + static_cast<ptrdiff_t>(end));
}

bool IsInline(const Record& r) { return r.id == static_cast<uint32_t>(RecordType::kSamplyDebugInfo2); }
bool IsLoad(const Record& r) { return r.id == static_cast<uint32_t>(RecordType::kCodeLoad); }

std::string ErrnoText(const char* what, const std::string& path, int err) {
  return std::string(what) + " " + path + ": " + std::strerror(err);
}

// Writes `data` to a new file next to `final_path`, with the mode and owner of `like`.
// On success *tmp_path names it (fsynced, closed).
bool WriteAside(const std::string& final_path, const std::vector<uint8_t>& data, const struct stat& like,
                std::string* tmp_path, std::string* error) {
  std::string pattern = final_path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    *error = ErrnoText("cannot create a file next to", final_path, errno);
    return false;
  }
  *tmp_path = pattern;
  bool ok = WriteAll(fd, data.data(), data.size());
  int err = ok ? 0 : errno;
  if (ok && ::fchmod(fd, like.st_mode & 07777) != 0) ok = false, err = errno;
  if (ok && (like.st_uid != ::geteuid() || like.st_gid != ::getegid())) {
    (void)!::fchown(fd, like.st_uid, like.st_gid);  // best effort: only root may give files away
  }
  if (ok && ::fsync(fd) != 0) ok = false, err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (!ok) {
    *error = ErrnoText("cannot write", *tmp_path, err);
    ::unlink(tmp_path->c_str());
    tmp_path->clear();
  }
  return ok;
}

void SyncDirectoryOf(const std::string& path) {
  const int fd = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

const char* StripStatusName(StripStatus status) {
  switch (status) {
    case StripStatus::kOk: return "stripped";
    case StripStatus::kNothingToDo: return "nothing-to-do";
    case StripStatus::kInvalid: return "invalid";
    case StripStatus::kNotClosed: return "not-closed";
    case StripStatus::kChanged: return "changed";
    case StripStatus::kIoError: return "io-error";
  }
  return "?";
}

StripStatus SplitInline(std::span<const uint8_t> data, std::vector<uint8_t>* stripped,
                        std::vector<uint8_t>* sidecar, StripInlineResult* result, std::string* error) {
  *result = {};
  result->bytes_before = data.size();
  stripped->clear();
  sidecar->clear();
  const JitDump dump = Parse(data);
  if (!dump.header_ok) {
    *error = dump.problems.empty() ? "not a jitdump file" : dump.problems.front().message;
    return StripStatus::kInvalid;
  }
  result->closed = !dump.records.empty() && !dump.truncated_offset &&
                   dump.records.back().id == static_cast<uint32_t>(RecordType::kCodeClose) &&
                   dump.records.back().offset + dump.records.back().total_size == data.size();
  for (const Record& r : dump.records) result->inline_records += IsInline(r) ? 1 : 0;
  if (result->inline_records == 0) {
    result->bytes_after = data.size();
    return StripStatus::kNothingToDo;
  }
  stripped->reserve(data.size());
  Append(stripped, data, 0, dump.records_offset);  // the header, verbatim
  Append(sidecar, data, 0, dump.records_offset);

  // Every byte that is not an inline record stays, in order; the reader's records tile the
  // file from records_offset, and whatever it could not decode (a truncated or corrupt tail)
  // is copied after them unchanged.
  uint64_t cursor = dump.records_offset;
  std::vector<const Record*> pending;  // inline records waiting for their CODE_LOAD
  for (const Record& r : dump.records) {
    if (r.offset > cursor) Append(stripped, data, cursor, r.offset);
    const uint64_t end = r.offset + r.total_size;
    if (IsInline(r)) {
      pending.push_back(&r);
    } else {
      Append(stripped, data, r.offset, end);
      if (IsLoad(r) && !pending.empty()) {
        for (const Record* p : pending) Append(sidecar, data, p->offset, p->offset + p->total_size);
        Append(sidecar, data, r.offset, end);
        ++result->loads_copied;
        pending.clear();
      }
    }
    cursor = end;
  }
  if (cursor < data.size()) Append(stripped, data, cursor, data.size());
  result->orphan_records = pending.size();
  result->inline_records -= pending.size();
  result->bytes_after = stripped->size();
  result->sidecar_bytes = sidecar->size();
  return StripStatus::kOk;
}

StripStatus StripInline(const std::string& dump_path, const StripInlineOptions& options,
                        StripInlineResult* result, std::string* error) {
  *result = {};
  struct stat before {};
  if (::stat(dump_path.c_str(), &before) != 0) {
    *error = ErrnoText("cannot stat", dump_path, errno);
    return StripStatus::kIoError;
  }
  std::vector<uint8_t> data;
  if (const Status s = ReadWholeFile(dump_path, &data); !s.ok()) {
    *error = "cannot read " + dump_path + ": " + s.ToString();
    return StripStatus::kIoError;
  }
  if (static_cast<uint64_t>(before.st_size) != data.size()) {
    *error = dump_path + " is still growing";
    return StripStatus::kChanged;
  }
  std::vector<uint8_t> stripped, sidecar;
  const StripStatus split = SplitInline(data, &stripped, &sidecar, result, error);
  if (split != StripStatus::kOk) return split;
  if (!result->closed && !options.force) {
    *error = dump_path + " does not end with JIT_CODE_CLOSE: its JVM may still be writing it (use --force "
             "if the JVM is gone)";
    return StripStatus::kNotClosed;
  }

  const std::string sidecar_path = dump_path + ".inline";
  std::string sidecar_tmp, dump_tmp;
  if (!WriteAside(sidecar_path, sidecar, before, &sidecar_tmp, error)) return StripStatus::kIoError;
  if (!WriteAside(dump_path, stripped, before, &dump_tmp, error)) {
    ::unlink(sidecar_tmp.c_str());
    return StripStatus::kIoError;
  }
  struct stat now {};
  if (::stat(dump_path.c_str(), &now) != 0 || !SameFile(before, now)) {
    ::unlink(sidecar_tmp.c_str());
    ::unlink(dump_tmp.c_str());
    *error = dump_path + " changed while it was being stripped; nothing replaced";
    return StripStatus::kChanged;
  }
  // Sidecar first: a crash between the renames leaves the inline records in both files,
  // never in neither.
  if (::rename(sidecar_tmp.c_str(), sidecar_path.c_str()) != 0) {
    *error = ErrnoText("cannot rename into", sidecar_path, errno);
    ::unlink(sidecar_tmp.c_str());
    ::unlink(dump_tmp.c_str());
    return StripStatus::kIoError;
  }
  if (::rename(dump_tmp.c_str(), dump_path.c_str()) != 0) {
    *error = ErrnoText("cannot rename into", dump_path, errno);
    ::unlink(dump_tmp.c_str());
    return StripStatus::kIoError;
  }
  SyncDirectoryOf(dump_path);
  return StripStatus::kOk;
}

}  // namespace jitdump::tool
