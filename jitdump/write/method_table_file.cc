// Writing a method table (method_table_file.h).
#include "jitdump/write/method_table_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace jitdump {
namespace {

constexpr uint64_t kAlign = 8;

uint64_t Padded(uint64_t size) { return (size + kAlign - 1) & ~(kAlign - 1); }

// Appends `fixed` (a format struct whose header is filled here), then each of `tails` (raw
// bytes), then zeros up to a multiple of 8. `fixed_size` bytes of `fixed` are copied.
template <typename Fixed>
bool AppendRecord(std::vector<uint8_t>& out, Fixed fixed, MethodTableRecord type, uint64_t timestamp,
                  std::initializer_list<std::span<const uint8_t>> tails) {
  uint64_t size = sizeof(Fixed);
  for (const std::span<const uint8_t>& tail : tails) size += tail.size();
  size = Padded(size);
  if (size > std::numeric_limits<uint32_t>::max()) return false;
  fixed.header.type = static_cast<uint32_t>(type);
  fixed.header.size = static_cast<uint32_t>(size);
  fixed.header.timestamp = timestamp;
  const size_t start = out.size();
  out.resize(start + size);  // zero-filled: the padding
  uint8_t* at = out.data() + start;
  std::memcpy(at, &fixed, sizeof fixed);
  at += sizeof fixed;
  for (const std::span<const uint8_t>& tail : tails) {
    if (!tail.empty()) std::memcpy(at, tail.data(), tail.size());
    at += tail.size();
  }
  return true;
}

std::span<const uint8_t> Bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

bool FitsU32(uint64_t size) { return size <= std::numeric_limits<uint32_t>::max(); }

}  // namespace

MethodTableHeader MakeMethodTableHeader(uint32_t pid, uint64_t timestamp) {
  MethodTableHeader header{};
  header.magic = kMethodTableMagic;
  header.version = kMethodTableVersion;
  header.header_size = sizeof header;
  header.pid = pid;
  header.timestamp = timestamp;
  return header;
}

bool AppendLayoutRecord(std::vector<uint8_t>& out, uint64_t timestamp, const MethodTableLayout& layout) {
  if (!FitsU32(layout.jvm_version.size())) return false;
  MethodTableLayoutFixed fixed{};
  fixed.elf_machine = layout.elf_machine;
  fixed.jvm_feature = layout.jvm_feature;
  fixed.word_size = layout.word_size;
  fixed.method_slot = layout.method_slot;
  fixed.bcp_slot = layout.bcp_slot;
  fixed.complete_slot = layout.complete_slot;
  fixed.bcp_register = layout.bcp_register;
  fixed.method_register = layout.method_register;
  fixed.jvm_version_size = static_cast<uint32_t>(layout.jvm_version.size());
  return AppendRecord(out, fixed, MethodTableRecord::kLayout, timestamp, {Bytes(layout.jvm_version)});
}

bool AppendClassRecord(std::vector<uint8_t>& out, const MethodTableClass& klass) {
  if (!FitsU32(klass.name.size()) || !FitsU32(klass.file.size())) return false;
  MethodTableClassFixed fixed{};
  fixed.class_id = klass.class_id;
  fixed.name_size = static_cast<uint32_t>(klass.name.size());
  fixed.file_size = static_cast<uint32_t>(klass.file.size());
  return AppendRecord(out, fixed, MethodTableRecord::kClass, klass.timestamp, {Bytes(klass.name), Bytes(klass.file)});
}

bool AppendMethodRecord(std::vector<uint8_t>& out, const MethodTableMethod& method) {
  if (!FitsU32(method.name.size()) || !FitsU32(method.descriptor.size()) || !FitsU32(method.lines.size())) {
    return false;
  }
  MethodTableMethodFixed fixed{};
  fixed.serial = method.serial;
  fixed.method = method.method;
  fixed.code_base = method.code_base;
  fixed.class_id = method.class_id;
  fixed.code_size = method.code_size;
  fixed.flags = method.flags;
  fixed.name_size = static_cast<uint32_t>(method.name.size());
  fixed.descriptor_size = static_cast<uint32_t>(method.descriptor.size());
  fixed.line_count = static_cast<uint32_t>(method.lines.size());
  const std::span<const uint8_t> lines(reinterpret_cast<const uint8_t*>(method.lines.data()),
                                       method.lines.size_bytes());
  return AppendRecord(out, fixed, MethodTableRecord::kMethod, method.timestamp,
                      {lines, Bytes(method.name), Bytes(method.descriptor)});
}

void AppendRetireRecord(std::vector<uint8_t>& out, uint64_t timestamp, uint64_t serial, uint64_t method) {
  MethodTableRetireRecord fixed{};
  fixed.serial = serial;
  fixed.method = method;
  (void)AppendRecord(out, fixed, MethodTableRecord::kRetire, timestamp, {});
}

MethodTableEndRecord MakeEndRecord(uint64_t timestamp, const MethodTableCounts& counts) {
  MethodTableEndRecord end{};
  end.header.type = static_cast<uint32_t>(MethodTableRecord::kEnd);
  end.header.size = sizeof end;
  end.header.timestamp = timestamp;
  end.classes = counts.classes;
  end.methods = counts.methods;
  end.retired = counts.retired;
  end.methods_lost = counts.methods_lost;
  return end;
}

Status MethodTableFile::Create(const HeldDirectory& dir, const std::string& name, const CreateRules& rules,
                               uint32_t pid, uint64_t timestamp) {
  const MethodTableHeader header = MakeMethodTableHeader(pid, timestamp);
  return file_.Create(dir, name, rules, O_WRONLY, {reinterpret_cast<const uint8_t*>(&header), sizeof header});
}

Status MethodTableFile::Create(const std::string& path, mode_t mode, uint32_t pid, uint64_t timestamp) {
  const MethodTableHeader header = MakeMethodTableHeader(pid, timestamp);
  return file_.Create(path, O_WRONLY, mode, {reinterpret_cast<const uint8_t*>(&header), sizeof header});
}

Status MethodTableFile::Append(std::span<const uint8_t> records) {
  if (!file_.is_open()) return Status::Error("write (file not open)", EBADF);
  if (records.empty()) return Status::Ok();
  struct iovec iov {const_cast<uint8_t*>(records.data()), records.size()};
  return file_.Append(&iov, 1);
}

Status MethodTableFile::Close(uint64_t timestamp, const MethodTableCounts& counts) {
  if (!file_.is_open()) return Status::Ok();
  const MethodTableEndRecord end = MakeEndRecord(timestamp, counts);
  const Status status = Append({reinterpret_cast<const uint8_t*>(&end), sizeof end});
  const Status closed = file_.Close(false);
  return status.ok() ? closed : status;
}

void MethodTableFile::Discard() { file_.Discard(); }

}  // namespace jitdump
