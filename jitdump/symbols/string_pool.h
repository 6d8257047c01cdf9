// Interned strings: each distinct string is stored once, and the views handed out stay valid as
// long as the pool (the set's nodes never move).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace jitdump::symbols {

class StringPool {
 public:
  std::string_view Intern(std::string_view text) {
    auto it = strings_.find(text);
    if (it == strings_.end()) it = strings_.emplace(text).first;
    return *it;
  }
  size_t size() const { return strings_.size(); }
  // Frees every string: the views handed out are invalid after it.
  void Clear() { decltype(strings_)().swap(strings_); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> strings_;
};

}  // namespace jitdump::symbols
