// perf-<pid>.map lines (perf_map.h).
#include "jitdump/write/perf_map.h"

namespace jitdump {
namespace {

void AppendHex(uint64_t value, std::string& out) {
  char digits[16];
  int count = 0;
  do {
    digits[count++] = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  while (count > 0) out.push_back(digits[--count]);
}

}  // namespace

void AppendPerfMapLine(uint64_t start, uint64_t size, std::string_view name, std::string& out) {
  AppendHex(start, out);
  out.push_back(' ');
  AppendHex(size, out);
  out.push_back(' ');
  if (name.empty()) name = "[unnamed]";
  // Control characters would split the line or reach a terminal: each becomes a space.
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  out.push_back('\n');
}

}  // namespace jitdump
