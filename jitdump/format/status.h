// A failed operation as a value: which operation failed and the errno it failed with.
// The jitdump library never throws and never prints; callers decide how to report.
#pragma once

#include <cstring>
#include <string>

namespace jitdump {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(const char* operation, int err_no) { return Status(operation, err_no); }

  bool ok() const { return operation_ == nullptr; }
  const char* operation() const { return operation_ ? operation_ : ""; }
  int err_no() const { return err_no_; }
  // "open: Permission denied"
  std::string ToString() const {
    if (ok()) return "ok";
    std::string text = operation_;
    if (err_no_ != 0) {
      text += ": ";
      text += std::strerror(err_no_);
    }
    return text;
  }

 private:
  Status(const char* operation, int err_no) : operation_(operation), err_no_(err_no) {}
  const char* operation_ = nullptr;
  int err_no_ = 0;
};

}  // namespace jitdump
