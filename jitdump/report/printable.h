// Text from a recording or a dump (paths a JVM mapped, process names) shown in a message:
// control bytes and bytes that are not ASCII become \xNN, so nothing in it can drive a terminal
// or split a line.
#pragma once

#include <string>
#include <string_view>

namespace jitdump::report {

inline std::string Printable(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace jitdump::report
