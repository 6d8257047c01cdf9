// A deliberately tiny walker over little-endian jitdump files for agent tests: records as
// (type, timestamp, fields) without validation. The validating reader is jitdump/read/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace test_support {

struct TestRecord {
  uint32_t id = 0;
  uint64_t timestamp = 0;
  uint64_t code_addr = 0;   // CODE_LOAD and DEBUG_INFO
  uint64_t code_size = 0;   // CODE_LOAD
  uint64_t code_index = 0;  // CODE_LOAD
  std::string name;         // CODE_LOAD
  std::vector<uint8_t> code;
  struct Entry {
    uint64_t addr;
    int32_t line;
    std::string file;
  };
  std::vector<Entry> entries;  // DEBUG_INFO
};

std::vector<uint8_t> ReadFileBytes(const std::string& path);
std::vector<TestRecord> WalkRecords(const std::vector<uint8_t>& bytes);

}  // namespace test_support
