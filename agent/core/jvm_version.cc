// Which JVM versions look up stale method ids safely (jvm_version.h).
#include "agent/core/jvm_version.h"

namespace jitdump_agent {
namespace {

// Reads a decimal number at `pos`, advancing it; nullopt when there is none.
std::optional<int> ReadNumber(std::string_view text, size_t& pos) {
  if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') return std::nullopt;
  int value = 0;
  for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
    if (value > 100000) return std::nullopt;
    value = value * 10 + (text[pos] - '0');
  }
  return value;
}

}  // namespace

std::optional<JvmVersion> ParseJvmVersion(std::string_view text) {
  size_t pos = 0;
  const auto feature = ReadNumber(text, pos);
  if (!feature) return std::nullopt;
  JvmVersion version;
  version.feature = *feature;
  int* const rest[] = {&version.interim, &version.update};
  for (int* field : rest) {
    if (pos >= text.size() || text[pos] != '.') break;
    ++pos;
    const auto number = ReadNumber(text, pos);
    if (!number) break;
    *field = *number;
  }
  if (version.feature == 1) {  // 1.8.0_402: feature 8, update 402
    version.feature = version.interim;
    version.interim = 0;
    version.update = 0;
    if (pos < text.size() && text[pos] == '_') {
      ++pos;
      version.update = ReadNumber(text, pos).value_or(0);
    }
  }
  return version;
}

bool LooksUpStaleMethodIdsSafely(const JvmVersion& v) {
  if (v.feature >= 22) return true;
  if (v.feature == 21) return v.interim > 0 || v.update >= 3;
  if (v.feature == 17) return v.interim > 0 || v.update >= 14;
  return false;  // 18-20 lack JDK-8313816; 11 and older are not tested here
}

}  // namespace jitdump_agent
