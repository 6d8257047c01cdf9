// gzip compression of a whole buffer onto a std::ostream through libdeflate: one gzip member,
// what every gzip reader takes (go tool pprof, zcat, browsers' DecompressionStream, which reads a
// single member only). libdeflate compresses a buffer it sees whole 2-3x faster than zlib's
// streaming deflate at its fastest level, and a little smaller.
#pragma once

#include <ostream>
#include <string_view>

namespace jitdump::report {

// Writes `bytes` to `out` as one gzip member at libdeflate's compression `level` (1 fastest, 12
// smallest). False when compressing or the stream failed (nothing or part of the output written).
bool WriteGzip(std::string_view bytes, int level, std::ostream& out);

}  // namespace jitdump::report
