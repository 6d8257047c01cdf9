// Decoding a method table (method_table.h).
#include "jitdump/read/method_table.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "jitdump/read/untrusted_file.h"

namespace jitdump {
namespace {

// The table's bytes in its byte order, read only at offsets the caller has bounded.
class TableBytes {
 public:
  TableBytes(std::span<const uint8_t> data, bool swap) : data_(data), swap_(swap) {}
  uint32_t U32(uint64_t offset) const {
    uint32_t v;
    std::memcpy(&v, data_.data() + offset, sizeof v);
    return swap_ ? __builtin_bswap32(v) : v;
  }
  int32_t I32(uint64_t offset) const { return static_cast<int32_t>(U32(offset)); }
  uint64_t U64(uint64_t offset) const {
    uint64_t v;
    std::memcpy(&v, data_.data() + offset, sizeof v);
    return swap_ ? __builtin_bswap64(v) : v;
  }
  std::string String(uint64_t offset, uint64_t size) const {
    return std::string(reinterpret_cast<const char*>(data_.data() + offset), static_cast<size_t>(size));
  }

 private:
  std::span<const uint8_t> data_;
  bool swap_;
};

constexpr uint64_t kPrefix = sizeof(MethodTableRecordHeader);

// Field offsets inside each record (offsetof on the format's structs).
#define FIELD(Struct, field) static_cast<uint64_t>(offsetof(Struct, field))

class Decoder {
 public:
  Decoder(std::span<const uint8_t> data, MethodTable& table) : bytes_(data, table.cross_endian), table_(table) {}

  void Record(uint64_t at, uint32_t type, uint64_t size, uint64_t timestamp) {
    switch (static_cast<MethodTableRecord>(type)) {
      case MethodTableRecord::kLayout: Layout(at, size, timestamp); break;
      case MethodTableRecord::kClass: Class(at, size, timestamp); break;
      case MethodTableRecord::kMethod: Method(at, size, timestamp); break;
      case MethodTableRecord::kRetire: Retire(at, size, timestamp); break;
      case MethodTableRecord::kEnd: End(at, size); break;
      default: ++unknown_; break;  // a later version's record: skipped
    }
  }

  void Finish() {
    if (unknown_ != 0) {
      AddProblem(table_.problems, 0, Severity::kWarning, "%llu record(s) of unknown types skipped",
                 static_cast<unsigned long long>(unknown_));
    }
    // Class ids to indexes, now that every CLASS is read (a METHOD may come first only in a
    // damaged table, but it costs nothing to allow).
    for (TableMethod& m : table_.methods) {
      const auto it = class_index_.find(pending_class_.at(&m - table_.methods.data()));
      m.klass = it != class_index_.end() ? it->second : UINT32_MAX;
    }
    // RETIREs name a serial.
    std::unordered_map<uint64_t, uint32_t> by_serial;
    by_serial.reserve(table_.methods.size());
    for (uint32_t i = 0; i < table_.methods.size(); ++i) by_serial.emplace(table_.methods[i].serial, i);
    for (const auto& [serial, time] : retires_) {
      const auto it = by_serial.find(serial);
      if (it != by_serial.end()) table_.methods[it->second].retired = std::min(table_.methods[it->second].retired, time);
    }
  }

 private:
  bool Fits(uint64_t at, uint64_t size, uint64_t need, const char* what) {
    if (size >= need) return true;
    AddProblem(table_.problems, at, Severity::kError, "%s record of %llu bytes is shorter than its %llu-byte body",
               what, static_cast<unsigned long long>(size), static_cast<unsigned long long>(need));
    return false;
  }

  void Layout(uint64_t at, uint64_t size, uint64_t timestamp) {
    using F = MethodTableLayoutFixed;
    if (!Fits(at, size, sizeof(F), "LAYOUT")) return;
    TableLayout layout;
    layout.timestamp = timestamp;
    layout.elf_machine = bytes_.U32(at + FIELD(F, elf_machine));
    layout.jvm_feature = bytes_.U32(at + FIELD(F, jvm_feature));
    layout.word_size = bytes_.U32(at + FIELD(F, word_size));
    layout.method_slot = bytes_.I32(at + FIELD(F, method_slot));
    layout.bcp_slot = bytes_.I32(at + FIELD(F, bcp_slot));
    layout.complete_slot = bytes_.I32(at + FIELD(F, complete_slot));
    layout.bcp_register = bytes_.U32(at + FIELD(F, bcp_register));
    layout.method_register = bytes_.U32(at + FIELD(F, method_register));
    const uint64_t version_size = bytes_.U32(at + FIELD(F, jvm_version_size));
    if (!Fits(at, size, sizeof(F) + version_size, "LAYOUT")) return;
    layout.jvm_version = bytes_.String(at + sizeof(F), version_size);
    if (layout.word_size != 8 || layout.method_slot == 0 || layout.bcp_slot == 0 ||
        layout.method_slot < -64 || layout.method_slot > 64 || layout.bcp_slot < -64 || layout.bcp_slot > 64 ||
        layout.complete_slot < -64 || layout.complete_slot > 64) {
      AddProblem(table_.problems, at, Severity::kError, "LAYOUT describes no frame this reader can walk "
                 "(word size %u, slots %d %d %d)", layout.word_size, layout.method_slot, layout.bcp_slot,
                 layout.complete_slot);
      return;
    }
    if (table_.layout) {
      AddProblem(table_.problems, at, Severity::kWarning, "a second LAYOUT record (the first one stands)");
      return;
    }
    table_.layout = std::move(layout);
  }

  void Class(uint64_t at, uint64_t size, uint64_t timestamp) {
    using F = MethodTableClassFixed;
    (void)timestamp;
    if (!Fits(at, size, sizeof(F), "CLASS")) return;
    const uint64_t name_size = bytes_.U32(at + FIELD(F, name_size));
    const uint64_t file_size = bytes_.U32(at + FIELD(F, file_size));
    if (!Fits(at, size, sizeof(F) + name_size + file_size, "CLASS")) return;
    TableClass klass;
    klass.class_id = bytes_.U64(at + FIELD(F, class_id));
    klass.name = bytes_.String(at + sizeof(F), name_size);
    klass.file = bytes_.String(at + sizeof(F) + name_size, file_size);
    // A later CLASS with the same id (not something a producer writes) replaces the earlier.
    const auto [it, fresh] = class_index_.emplace(klass.class_id, static_cast<uint32_t>(table_.classes.size()));
    if (fresh) {
      table_.classes.push_back(std::move(klass));
    } else {
      table_.classes[it->second] = std::move(klass);
    }
  }

  void Method(uint64_t at, uint64_t size, uint64_t timestamp) {
    using F = MethodTableMethodFixed;
    if (!Fits(at, size, sizeof(F), "METHOD")) return;
    const uint64_t name_size = bytes_.U32(at + FIELD(F, name_size));
    const uint64_t descriptor_size = bytes_.U32(at + FIELD(F, descriptor_size));
    const uint64_t line_count = bytes_.U32(at + FIELD(F, line_count));
    if (!Fits(at, size, sizeof(F) + line_count * sizeof(MethodTableLine) + name_size + descriptor_size, "METHOD")) {
      return;
    }
    TableMethod m;
    m.timestamp = timestamp;
    m.serial = bytes_.U64(at + FIELD(F, serial));
    m.method = bytes_.U64(at + FIELD(F, method));
    m.code_base = bytes_.U64(at + FIELD(F, code_base));
    m.code_size = bytes_.U32(at + FIELD(F, code_size));
    m.flags = bytes_.U32(at + FIELD(F, flags));
    uint64_t next = at + sizeof(F);
    m.lines.resize(line_count);
    for (MethodTableLine& line : m.lines) {
      line.bci = bytes_.U32(next);
      line.line = bytes_.U32(next + 4);
      next += sizeof(MethodTableLine);
    }
    if (!std::is_sorted(m.lines.begin(), m.lines.end(),
                        [](const MethodTableLine& a, const MethodTableLine& b) { return a.bci < b.bci; })) {
      std::stable_sort(m.lines.begin(), m.lines.end(),
                       [](const MethodTableLine& a, const MethodTableLine& b) { return a.bci < b.bci; });
    }
    m.name = bytes_.String(next, name_size);
    m.descriptor = bytes_.String(next + name_size, descriptor_size);
    pending_class_.push_back(bytes_.U64(at + FIELD(F, class_id)));
    table_.methods.push_back(std::move(m));
  }

  void Retire(uint64_t at, uint64_t size, uint64_t timestamp) {
    using F = MethodTableRetireRecord;
    if (!Fits(at, size, sizeof(F), "RETIRE")) return;
    retires_.emplace_back(bytes_.U64(at + FIELD(F, serial)), timestamp);
  }

  void End(uint64_t at, uint64_t size) {
    using F = MethodTableEndRecord;
    if (!Fits(at, size, sizeof(F), "END")) return;
    table_.ended = true;
    table_.end_counts.classes = bytes_.U64(at + FIELD(F, classes));
    table_.end_counts.methods = bytes_.U64(at + FIELD(F, methods));
    table_.end_counts.retired = bytes_.U64(at + FIELD(F, retired));
    table_.end_counts.methods_lost = bytes_.U64(at + FIELD(F, methods_lost));
  }

  TableBytes bytes_;
  MethodTable& table_;
  uint64_t unknown_ = 0;
  std::unordered_map<uint64_t, uint32_t> class_index_;  // class id -> index into classes
  std::vector<uint64_t> pending_class_;                  // per method: its class id
  std::vector<std::pair<uint64_t, uint64_t>> retires_;   // (serial, time)
};

#undef FIELD

}  // namespace

uint32_t TableMethod::LineAt(uint64_t bci) const {
  if (lines.empty()) return 0;
  const auto after = std::upper_bound(lines.begin(), lines.end(), bci,
                                      [](uint64_t b, const MethodTableLine& line) { return b < line.bci; });
  return after == lines.begin() ? lines.front().line : std::prev(after)->line;
}

void MethodTable::Index() {
  by_method_.clear();
  for (uint32_t i = 0; i < methods.size(); ++i) by_method_[methods[i].method].push_back(i);
  for (auto& [method, indexes] : by_method_) {
    std::stable_sort(indexes.begin(), indexes.end(), [this](uint32_t a, uint32_t b) {
      const TableMethod& x = methods[a];
      const TableMethod& y = methods[b];
      return x.timestamp != y.timestamp ? x.timestamp < y.timestamp : x.serial < y.serial;
    });
  }
}

const TableMethod* MethodTable::Find(uint64_t method, std::optional<uint64_t> time) const {
  const auto it = by_method_.find(method);
  if (it == by_method_.end()) return nullptr;
  const std::vector<uint32_t>& indexes = it->second;
  if (!time) return &methods[indexes.back()];
  // The last record stamped at or before `time`.
  const auto after = std::upper_bound(indexes.begin(), indexes.end(), *time,
                                      [this](uint64_t t, uint32_t i) { return t < methods[i].timestamp; });
  if (after == indexes.begin()) return nullptr;
  const TableMethod& m = methods[*std::prev(after)];
  return m.retired <= *time ? nullptr : &m;
}

MethodTable ParseMethodTable(std::span<const uint8_t> bytes) {
  MethodTable table;
  if (bytes.size() < sizeof(MethodTableHeader)) {
    AddProblem(table.problems, 0, Severity::kError, "%zu bytes: shorter than a method table's %zu-byte header",
               bytes.size(), sizeof(MethodTableHeader));
    return table;
  }
  uint32_t magic;
  std::memcpy(&magic, bytes.data(), sizeof magic);
  if (magic != kMethodTableMagic && magic != kMethodTableMagicSwapped) {
    AddProblem(table.problems, 0, Severity::kError, "not a method table (magic 0x%08x)", magic);
    return table;
  }
  table.cross_endian = magic == kMethodTableMagicSwapped;
  const TableBytes raw(bytes, table.cross_endian);
  table.header.magic = kMethodTableMagic;
  table.header.version = raw.U32(offsetof(MethodTableHeader, version));
  table.header.header_size = raw.U32(offsetof(MethodTableHeader, header_size));
  table.header.pid = raw.U32(offsetof(MethodTableHeader, pid));
  table.header.timestamp = raw.U64(offsetof(MethodTableHeader, timestamp));
  table.header.flags = raw.U64(offsetof(MethodTableHeader, flags));
  if (table.header.version != kMethodTableVersion) {
    AddProblem(table.problems, 4, Severity::kError, "method table version %u; this reader knows version %u",
               table.header.version, kMethodTableVersion);
    return table;
  }
  if (table.header.header_size < sizeof(MethodTableHeader) || table.header.header_size > bytes.size() ||
      table.header.header_size % 8 != 0) {
    AddProblem(table.problems, 8, Severity::kError, "header size %u does not fit a %zu-byte file",
               table.header.header_size, bytes.size());
    return table;
  }
  table.header_ok = true;
  Decoder decoder(bytes, table);
  uint64_t at = table.header.header_size;
  while (at < bytes.size()) {
    if (bytes.size() - at < kPrefix) {
      table.truncated_offset = at;
      break;
    }
    const uint32_t type = raw.U32(at);
    const uint64_t size = raw.U32(at + 4);
    const uint64_t timestamp = raw.U64(at + 8);
    if (size < kPrefix || size % 8 != 0) {
      AddProblem(table.problems, at, Severity::kError, "record size %llu is not a multiple of 8 of at least 16; "
                 "the rest of the table is unreadable", static_cast<unsigned long long>(size));
      break;
    }
    if (size > bytes.size() - at) {
      table.truncated_offset = at;
      break;
    }
    decoder.Record(at, type, size, timestamp);
    at += size;
  }
  if (table.truncated_offset) {
    AddProblem(table.problems, *table.truncated_offset, Severity::kWarning,
               "the table ends inside a record (its writer was stopped): read up to here");
  }
  decoder.Finish();
  if (!table.layout) {
    AddProblem(table.problems, table.header.header_size, Severity::kError,
               "no LAYOUT record: interpreted frames cannot be read with this table");
  }
  table.Index();
  return table;
}

bool LoadMethodTable(const std::string& path, uint64_t max_bytes, MethodTable* table, std::string* error) {
  int fd = -1;
  struct stat st {};
  if (const Status status = OpenUntrusted(path, &fd, &st); !status.ok()) {
    *error = status.ToString();
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *error = "larger than " + std::to_string(max_bytes) + " bytes";
    ::close(fd);
    return false;
  }
  // The size fstat gave, at most: a file still growing (a live JVM's) is read to there.
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // a file that shrank while read: what was read
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  *table = ParseMethodTable(bytes);
  return true;
}

std::string MethodTablePathFor(const std::string& dump_path) { return dump_path + kMethodTableSuffix; }

}  // namespace jitdump
