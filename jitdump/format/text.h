// Small text helpers the agent, the reader and the tool share, so each rule exists once: what
// counts as surrounding space, a path's last component, what `%p` in a path means (the agent
// expands it when it writes a file; the report expands the same pattern to find that file again),
// and how bytes from outside are shown in a message.
#pragma once

#include <cstddef>
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

// Bytes from outside (a user's option, a recording, a dump, a path a JVM mapped) made safe to
// show in a message: control bytes and DEL become \xNN, so nothing in them can drive a terminal
// or split a line, and so do bytes from 0x80 up unless `keep_non_ascii` (names shown as they are
// spelled, UTF-8 included). At most `max` bytes are shown, then "...".
inline std::string EscapedText(std::string_view text, bool keep_non_ascii = false, size_t max = SIZE_MAX) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  const std::string_view shown = text.substr(0, max);
  out.reserve(shown.size());
  for (const char c : shown) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || (u > 0x7f && !keep_non_ascii)) {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  if (text.size() > shown.size()) out += "...";
  return out;
}

// The form messages use: every byte outside printable ASCII escaped.
inline std::string Printable(std::string_view text) { return EscapedText(text); }

}  // namespace jitdump
