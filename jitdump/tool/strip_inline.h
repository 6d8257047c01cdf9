// `jitdump strip-inline DUMP`: moves samply's SAMPLY_JIT_CODE_DEBUG_INFO2 records out of a
// finished jitdump into a sidecar DUMP.inline, so perf 6.1's `perf inject --jit` stops
// printing "next_entry: unknown record type 827346259, skipping" once per inline record.
//
// The sidecar is itself a valid jitdump: DUMP's header, then for every CODE_LOAD that had
// inline records, those records followed by a byte copy of the CODE_LOAD (samply applies a
// DEBUG_INFO2 to the next CODE_LOAD). DUMP is rewritten without the inline records; every
// other byte (other records, unknown record types, a truncated tail) is kept as it was, in
// order. Both files are written aside (mkstemp in DUMP's directory, fsync) and renamed into
// place, sidecar first, so a crash leaves either the old DUMP or both new files.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace jitdump::tool {

struct StripInlineResult {
  uint64_t inline_records = 0;  // moved to the sidecar
  uint64_t orphan_records = 0;  // inline records with no CODE_LOAD after them: dropped
  uint64_t loads_copied = 0;    // CODE_LOADs copied into the sidecar
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;     // of the rewritten DUMP
  uint64_t sidecar_bytes = 0;
  bool closed = false;          // DUMP ended with JIT_CODE_CLOSE (the writer finished)
};

enum class StripStatus {
  kOk,            // stripped
  kNothingToDo,   // no inline records; nothing written
  kInvalid,       // not a jitdump (no readable header)
  kNotClosed,     // no trailing JIT_CODE_CLOSE: the JVM may still be writing (use force)
  kChanged,       // DUMP changed while we worked; nothing replaced
  kIoError,
};

// The pure part: splits a whole dump into the stripped dump and the sidecar.
// Returns kOk, kNothingToDo or kInvalid; *stripped and *sidecar are filled for kOk only.
StripStatus SplitInline(std::span<const uint8_t> data, std::vector<uint8_t>* stripped,
                        std::vector<uint8_t>* sidecar, StripInlineResult* result, std::string* error);

struct StripInlineOptions {
  bool force = false;  // strip a dump without JIT_CODE_CLOSE (a JVM that was killed)
};

// Strips `dump_path` in place and writes `dump_path + ".inline"` (see above).
StripStatus StripInline(const std::string& dump_path, const StripInlineOptions& options,
                        StripInlineResult* result, std::string* error);

// "stripped", "nothing-to-do", "invalid", "not-closed", "changed", "io-error".
const char* StripStatusName(StripStatus status);

}  // namespace jitdump::tool
