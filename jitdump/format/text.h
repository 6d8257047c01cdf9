// Small text helpers the agent, the reader and the tool share, so each rule exists once: what
// counts as surrounding space, a path's last component, and what `%p` in a path means (the agent
// expands it when it writes a file; the report expands the same pattern to find that file again).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitdump {

// Spaces, tabs, CR and LF removed from both ends.
inline std::string_view TrimSpace(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// What follows the last '/' (the whole path when there is none).
inline std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `%p` becomes the pid and `%%` a single '%'; any other character stays as it is.
inline std::string ExpandPid(std::string_view pattern, uint32_t pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] == '%' && next == 'p') {
      out += std::to_string(pid);
      ++i;
    } else if (pattern[i] == '%' && next == '%') {
      out.push_back('%');
      ++i;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
}

}  // namespace jitdump
