// Writing a method table (method_table_format.h): its records encoded into a byte buffer, and
// the file they are appended to whole, created as safely as the dump beside it (safe_file.h).
// Nothing here knows JVMTI: the producer fills the plain structs below.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jitdump/format/method_table_format.h"
#include "jitdump/write/record_file.h"
#include "jitdump/write/safe_file.h"
#include "jitdump/format/status.h"

namespace jitdump {

struct MethodTableLayout {
  uint32_t elf_machine = 0;
  uint32_t jvm_feature = 0;
  uint32_t word_size = 8;
  int32_t method_slot = 0;
  int32_t bcp_slot = 0;
  int32_t complete_slot = 0;
  uint32_t bcp_register = 0;
  uint32_t method_register = 0;
  std::string_view jvm_version;
};

struct MethodTableClass {
  uint64_t timestamp = 0;
  uint64_t class_id = 0;
  std::string_view name;
  std::string_view file;
};

struct MethodTableMethod {
  uint64_t timestamp = 0;
  uint64_t serial = 0;
  uint64_t method = 0;
  uint64_t code_base = 0;
  uint64_t class_id = 0;
  uint32_t code_size = 0;
  uint32_t flags = 0;
  std::string_view name;
  std::string_view descriptor;
  std::span<const MethodTableLine> lines;  // sorted by bci
};

MethodTableHeader MakeMethodTableHeader(uint32_t pid, uint64_t timestamp);

// Each appends one whole record to `out`; false (and `out` unchanged) when the record would not
// fit the format (a size past 4 GiB, a string past 4 GiB).
bool AppendLayoutRecord(std::vector<uint8_t>& out, uint64_t timestamp, const MethodTableLayout& layout);
bool AppendClassRecord(std::vector<uint8_t>& out, const MethodTableClass& klass);
bool AppendMethodRecord(std::vector<uint8_t>& out, const MethodTableMethod& method);
void AppendRetireRecord(std::vector<uint8_t>& out, uint64_t timestamp, uint64_t serial, uint64_t method);
MethodTableEndRecord MakeEndRecord(uint64_t timestamp, const MethodTableCounts& counts);

class MethodTableFile {
 public:
  MethodTableFile() = default;
  MethodTableFile(const MethodTableFile&) = delete;
  MethodTableFile& operator=(const MethodTableFile&) = delete;

  // Creates `name` in `dir` already holding its header (CreateWithContentsAt's rules: never
  // through a symlink, never over another user's or a live process's file).
  Status Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules, uint32_t pid,
                uint64_t timestamp);
  // The same in the directory of `path` (tests and tools).
  Status Create(const std::string& path, mode_t mode, uint32_t pid, uint64_t timestamp);

  // Appends whole records (AppendWholeRecords: all of them or none).
  Status Append(std::span<const uint8_t> records);
  // Writes the END record and closes. Safe to call twice.
  Status Close(uint64_t timestamp, const MethodTableCounts& counts);
  // Closes and removes the file (nothing was ever written to it but its header).
  void Discard();

  bool is_open() const { return file_.is_open(); }
  uint64_t size() const { return file_.size(); }
  const std::string& path() const { return file_.path(); }

 private:
  RecordFile file_;
};

}  // namespace jitdump
