#include "test_dump_reader.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace test_support {
namespace {

template <typename T>
T At(const std::vector<uint8_t>& b, size_t offset) {
  T value{};
  if (offset + sizeof(T) <= b.size()) std::memcpy(&value, b.data() + offset, sizeof(T));
  return value;
}

}  // namespace

std::vector<uint8_t> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<TestRecord> WalkRecords(const std::vector<uint8_t>& b) {
  std::vector<TestRecord> records;
  size_t pos = At<uint32_t>(b, 8);  // header total_size
  while (pos + 16 <= b.size()) {
    TestRecord r;
    r.id = At<uint32_t>(b, pos);
    const uint32_t size = At<uint32_t>(b, pos + 4);
    r.timestamp = At<uint64_t>(b, pos + 8);
    if (size < 16 || pos + size > b.size()) break;
    if (r.id == 0) {
      r.code_addr = At<uint64_t>(b, pos + 32);
      r.code_size = At<uint64_t>(b, pos + 40);
      r.code_index = At<uint64_t>(b, pos + 48);
      r.name = reinterpret_cast<const char*>(b.data() + pos + 56);
      r.code.assign(b.begin() + static_cast<long>(pos + size - r.code_size), b.begin() + static_cast<long>(pos + size));
    } else if (r.id == 2) {
      r.code_addr = At<uint64_t>(b, pos + 16);
      const uint64_t n = At<uint64_t>(b, pos + 24);
      size_t e = pos + 32;
      for (uint64_t i = 0; i < n && e + 16 <= pos + size; ++i) {
        TestRecord::Entry entry{At<uint64_t>(b, e), At<int32_t>(b, e + 8), reinterpret_cast<const char*>(b.data() + e + 16)};
        e += 16 + entry.file.size() + 1;
        r.entries.push_back(entry);
      }
    }
    records.push_back(r);
    pos += size;
  }
  return records;
}

}  // namespace test_support
