// The one way the jitdump tool writes JSON: every --json output is built as a Json value
// (nlohmann::ordered_json: members print in the order they are set) and printed here.
//
// Printing first makes every string valid UTF-8, so the output is valid JSON whatever bytes a
// dump holds: a byte that is not part of a well-formed UTF-8 sequence becomes the code point of
// the same value (0xff -> U+00FF, printed as "ÿ"), which keeps it visible and recoverable.
// Control characters are escaped (\n, \t, \u0001).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace jitdump::tool {

using Json = nlohmann::ordered_json;

// Prints `value` and a newline on stdout.
void PrintJson(Json value);

// For outputs that grow with the dump, printed one element at a time so that no tree of the
// whole file is ever built: an array of `count` elements, one per line, made by `element(i)`.
void PrintJsonArray(size_t count, const std::function<Json(size_t)>& element);

// The same inside an object: `head`'s members, then `key`: that array, then `tail`'s members.
void PrintJsonObjectWithArray(Json head, std::string_view key, size_t count,
                              const std::function<Json(size_t)>& element, Json tail);

}  // namespace jitdump::tool
