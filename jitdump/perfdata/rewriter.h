// Copies a perf.data recording record by record, in file order, with the file names of some
// MMAP/MMAP2 records changed: what `jitdump retarget-markers` (and through it scripts/bin/collect)
// does so that `perf inject --jit` finds the dumps of JVMs that ran in containers. Everything
// else is copied as it is: the header, the events and their ids, every other record, the
// feature sections (their offsets moved by what the data section grew or shrank). COMPRESSED
// records (perf record -z) are written out decompressed, since a name inside one cannot change
// without recompressing the whole stream; a stream (pipe mode) stays a stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace jitdump::perfdata {

struct RewriteStats {
  uint64_t records = 0;       // records written
  uint64_t renamed = 0;       // MMAP/MMAP2 records whose file name changed
  uint64_t decompressed = 0;  // COMPRESSED records written out as their records
};

// The new file name for an MMAP/MMAP2 of `pid` naming `filename`, or nullopt to keep it.
using RenameMmap = std::function<std::optional<std::string>(uint32_t pid, std::string_view filename)>;

// Reads the recording at `in_fd` (from its start; a regular file or a stream) and writes the
// copy to `out_fd` (a regular file: the header is patched at the end for the file format).
// False with `error` (naming the offset) when the input is no perf.data, is damaged, or a write
// fails; the output is then incomplete and the caller removes it.
bool RewriteMmapNames(int in_fd, int out_fd, const RenameMmap& rename, RewriteStats* stats, std::string* error);

}  // namespace jitdump::perfdata
