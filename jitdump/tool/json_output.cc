// The JSON writer of the jitdump tool (json_output.h): strings made valid UTF-8, then one
// nlohmann-json serialization for every output.
#include "jitdump/tool/json_output.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace jitdump::tool {
namespace {

// Length (1-4) of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), 0 when the byte there does not start one.
size_t WellFormedUtf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) low = 0xa0;   // overlong
    if (c == 0xed) high = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) low = 0x90;   // overlong
    if (c == 0xf4) high = 0x8f;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + length > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  return length;
}

// `text` with every byte outside a well-formed sequence replaced by the UTF-8 encoding of the
// code point of the same value.
std::string ToUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const size_t length = WellFormedUtf8Length(text, i);
    if (length != 0) {
      out.append(text, i, length);
      i += length;
    } else {
      const auto c = static_cast<uint8_t>(text[i++]);
      out.push_back(static_cast<char>(0xc0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
  return out;
}

bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = WellFormedUtf8Length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

void MakeUtf8(Json& value) {
  if (value.is_string()) {
    std::string& text = value.get_ref<std::string&>();
    if (!IsUtf8(text)) text = ToUtf8(text);
  } else if (value.is_structured()) {
    for (Json& child : value) MakeUtf8(child);
  }
}

// The single serialization: strings made UTF-8, then one line of JSON. Member names are ours
// (ASCII); `replace` only guards against a name that is not.
std::string Serialize(Json value) {
  MakeUtf8(value);
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void Write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The elements of a streamed array, one per line, between its brackets.
void WriteArray(size_t count, const std::function<Json(size_t)>& element) {
  Write("[");
  for (size_t i = 0; i < count; ++i) Write((i == 0 ? "\n" : ",\n") + Serialize(element(i)));
  Write("\n]");
}

}  // namespace

void PrintJson(Json value) { Write(Serialize(std::move(value)) + "\n"); }

void PrintJsonArray(size_t count, const std::function<Json(size_t)>& element) {
  WriteArray(count, element);
  Write("\n");
}

void PrintJsonObjectWithArray(Json head, std::string_view key, size_t count,
                              const std::function<Json(size_t)>& element, Json tail) {
  // head's text without its closing brace, then the array as one more member, then tail's
  // members without its opening brace.
  std::string text = Serialize(std::move(head));
  text.pop_back();
  if (text.size() > 1) text += ",";
  Write(text + Serialize(Json(std::string(key))) + ":");
  WriteArray(count, element);
  text = Serialize(std::move(tail));
  Write(text.size() > 2 ? "," + text.substr(1) + "\n" : "}\n");
}

}  // namespace jitdump::tool
