// The decoder: a whole jitdump held in memory (any producer, either byte order) to a JitDump.
// It never trusts a length it has not checked against the record's total_size and the bytes
// available, never allocates by an unchecked count, and never throws: every defect it meets
// becomes a Problem with the byte offset it is about, and decoding goes on where total_size
// allows. The rules a consumer applies on top of a readable file are in consumer_rules.h.
#pragma once

#include <cstdint>
#include <span>

#include "jitdump/read/dump.h"

namespace jitdump {

// Decodes `data`, the whole file.
JitDump Parse(std::span<const uint8_t> data);

}  // namespace jitdump
