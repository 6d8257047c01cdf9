// JSON text built field by field, for the agent's statistics. The agent links no JSON library
// (it keeps its dependencies to the C++ runtime and Boost's lock-free queue); this writer knows
// where commas go, so no caller has to.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitdump_agent {

class JsonWriter {
 public:
  JsonWriter() { out_.push_back('{'); }

  // Opens an object under `key` in the current one; End() closes it.
  JsonWriter& Begin(std::string_view key);
  JsonWriter& End();
  JsonWriter& Field(std::string_view key, uint64_t value);
  // Escaped; a byte sequence that is not UTF-8 (a path can be anything) becomes U+FFFD, so the
  // text stays valid JSON.
  JsonWriter& Field(std::string_view key, std::string_view value);

  // The text, with every open object closed and a final newline.
  std::string Finish();

 private:
  void Key(std::string_view key);
  void String(std::string_view s);

  std::string out_;
  std::string open_ = "e";  // per open object: 'e' while it has no field yet, 'f' after
};

}  // namespace jitdump_agent
