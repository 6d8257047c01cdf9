// gzip compression of a whole buffer onto a std::ostream through ISA-L's igzip (Intel's
// Intelligent Storage Acceleration Library, Debian libisal-dev): one gzip member, what every gzip
// reader takes (go tool pprof, zcat, browsers' DecompressionStream, which reads a single member
// only). On the report's encoded pprof (6.4 MB) igzip's level 2 takes 11 ms where libdeflate's
// fastest level took 26 ms and zlib's longer still, for 6 % more bytes; it writes the output as
// it goes, through a small buffer, instead of into one the size of the whole result.
#pragma once

#include <ostream>
#include <string_view>

namespace jitdump::report {

// The level the report writes at: igzip's levels go from 0 (fastest) to 3 (smallest).
inline constexpr int kGzipLevel = 2;

// Writes `bytes` to `out` as one gzip member at igzip's compression `level` (0 to 3). False
// when compressing or the stream failed (nothing or part of the output written).
bool WriteGzip(std::string_view bytes, int level, std::ostream& out);

}  // namespace jitdump::report
