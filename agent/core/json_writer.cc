// JsonWriter (json_writer.h).
#include "agent/core/json_writer.h"

#include <cinttypes>
#include <cstdio>

namespace jitdump_agent {
namespace {

// The length of the UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points past U+10FFFF included).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
    return 0;
  }
  return n;
}

}  // namespace

void JsonWriter::Key(std::string_view key) {
  if (open_.back() == 'f') out_.push_back(',');
  open_.back() = 'f';
  String(key);
  out_.push_back(':');
}

void JsonWriter::String(std::string_view s) {
  out_.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      out_ += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out_.push_back('\\');
      out_.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out_ += buf;
    } else {
      out_.append(s, i, n);
    }
    i += n;
  }
  out_.push_back('"');
}

JsonWriter& JsonWriter::Begin(std::string_view key) {
  Key(key);
  out_.push_back('{');
  open_.push_back('e');
  return *this;
}

JsonWriter& JsonWriter::End() {
  if (open_.size() > 1) {  // the outermost object closes in Finish()
    out_.push_back('}');
    open_.pop_back();
  }
  return *this;
}

JsonWriter& JsonWriter::Field(std::string_view key, uint64_t value) {
  Key(key);
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIu64, value);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::Field(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
  return *this;
}

std::string JsonWriter::Finish() {
  while (open_.size() > 1) End();
  out_ += "}\n";
  return std::move(out_);
}

}  // namespace jitdump_agent
