// Builds jitdump bytes field by field in either byte order, for crafting valid, cross-endian
// and deliberately malformed files in tests (independent of the encoder).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace jitdump::testing {

class Builder {
 public:
  explicit Builder(bool big_endian = false) : big_(big_endian) {}

  Builder& U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (big_ ? 24 - 8 * i : 8 * i)));
    return *this;
  }
  Builder& U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (big_ ? 56 - 8 * i : 8 * i)));
    return *this;
  }
  // The string and its NUL.
  Builder& Str(std::string_view s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
    return *this;
  }
  Builder& Raw(std::string_view s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  Builder& Zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, 0);
    return *this;
  }
  void PatchU32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_[at + i] = static_cast<uint8_t>(v >> (big_ ? 24 - 8 * i : 8 * i));
  }
  void PatchU64(size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes_[at + i] = static_cast<uint8_t>(v >> (big_ ? 56 - 8 * i : 8 * i));
  }
  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

  // ---- whole structures; each returns the offset where it starts ----

  size_t Header(uint32_t version = 1, uint32_t total_size = 40, uint64_t timestamp = 1000, uint64_t flags = 0,
                uint32_t pid = 4242) {
    const size_t at = size();
    U32(0x4A695444).U32(version).U32(total_size).U32(62).U32(0).U32(pid).U64(timestamp).U64(flags);
    if (total_size > 40) Zeros(total_size - 40);
    return at;
  }
  // Starts a record; call End(at) after its body to patch total_size.
  size_t Begin(uint32_t id, uint64_t timestamp) {
    const size_t at = size();
    U32(id).U32(0).U64(timestamp);
    return at;
  }
  void End(size_t at) { PatchU32(at + 4, static_cast<uint32_t>(size() - at)); }

  size_t Load(uint64_t timestamp, uint64_t addr, uint64_t code_size, uint64_t index, std::string_view name,
              uint32_t pid = 4242, uint32_t tid = 4243) {
    const size_t at = Begin(0, timestamp);
    U32(pid).U32(tid).U64(addr).U64(addr).U64(code_size).U64(index).Str(name);
    for (uint64_t i = 0; i < code_size; ++i) bytes_.push_back(static_cast<uint8_t>(0x90 + (i & 3)));
    End(at);
    return at;
  }
  size_t Move(uint64_t timestamp, uint64_t old_addr, uint64_t new_addr, uint64_t code_size, uint64_t index) {
    const size_t at = Begin(1, timestamp);
    U32(4242).U32(4243).U64(new_addr).U64(old_addr).U64(new_addr).U64(code_size).U64(index);
    End(at);
    return at;
  }
  struct Entry {
    uint64_t addr;
    int32_t line;
    int32_t discrim;
    std::string_view file;
  };
  size_t DebugInfo(uint64_t timestamp, uint64_t code_addr, std::initializer_list<Entry> entries) {
    const size_t at = Begin(2, timestamp);
    U64(code_addr).U64(entries.size());
    for (const Entry& e : entries) U64(e.addr).U32(static_cast<uint32_t>(e.line)).U32(static_cast<uint32_t>(e.discrim)).Str(e.file);
    End(at);
    return at;
  }
  size_t Close(uint64_t timestamp) {
    const size_t at = Begin(3, timestamp);
    End(at);
    return at;
  }
  size_t Unwinding(uint64_t timestamp, std::string_view data, uint64_t hdr_size, uint64_t mapped_size) {
    const size_t at = Begin(4, timestamp);
    U64(data.size()).U64(hdr_size).U64(mapped_size).Raw(data);
    End(at);
    return at;
  }

  struct Function {
    uint32_t name, file, line, column, flags;
  };
  struct Call {
    uint32_t depth, range_count, function, call_line, call_column;
  };
  struct Range {
    uint32_t start, size;
  };
  struct Line {
    uint32_t offset, file, line, column;
  };
  // A samply DEBUG_INFO2 record with correctly padded string lists.
  size_t Samply(uint64_t timestamp, std::initializer_list<std::string_view> files,
                std::initializer_list<std::string_view> names, std::initializer_list<Function> functions,
                std::initializer_list<Call> calls, std::initializer_list<Range> ranges,
                std::initializer_list<Line> lines) {
    return Samply(timestamp, std::vector<std::string_view>(files), std::vector<std::string_view>(names),
                  std::vector<Function>(functions), std::vector<Call>(calls), std::vector<Range>(ranges),
                  std::vector<Line>(lines));
  }
  // The same from lists a test makes up.
  size_t Samply(uint64_t timestamp, const std::vector<std::string_view>& files,
                const std::vector<std::string_view>& names, const std::vector<Function>& functions,
                const std::vector<Call>& calls, const std::vector<Range>& ranges, const std::vector<Line>& lines) {
    const size_t at = Begin(827346259, timestamp);
    auto list_size = [](const std::vector<std::string_view>& list) {
      size_t n = 0;
      for (std::string_view s : list) n += s.size() + 1;
      return static_cast<uint32_t>((n + 3) & ~size_t{3});
    };
    U32(static_cast<uint32_t>(files.size())).U32(list_size(files));
    U32(static_cast<uint32_t>(names.size())).U32(list_size(names));
    U32(static_cast<uint32_t>(functions.size())).U32(static_cast<uint32_t>(calls.size()));
    U32(static_cast<uint32_t>(ranges.size())).U32(static_cast<uint32_t>(lines.size()));
    for (auto* list : {&files, &names}) {
      size_t n = 0;
      for (std::string_view s : *list) {
        Str(s);
        n += s.size() + 1;
      }
      Zeros(((n + 3) & ~size_t{3}) - n);
    }
    for (const Function& f : functions) U32(f.name).U32(f.file).U32(f.line).U32(f.column).U32(f.flags);
    for (const Call& c : calls) U32(c.depth).U32(c.range_count).U32(c.function).U32(c.call_line).U32(c.call_column);
    for (const Range& r : ranges) U32(r.start).U32(r.size);
    for (const Line& l : lines) U32(l.offset).U32(l.file).U32(l.line).U32(l.column);
    End(at);
    return at;
  }

 private:
  bool big_;
  std::vector<uint8_t> bytes_;
};

// Offsets of the samply record's fixed fields and lists (for tests that corrupt them).
inline constexpr size_t kSamplyFileCount = 16, kSamplyFileListSize = 20, kSamplyRangeCount = 40,
                        kSamplyLists = 48;

// A file exercising the inline record: outer "Outer.run" (Outer.java) with code at 0x10000,
// 0x100 bytes. It inlines "Mid.step" (Mid.java, called at Outer.java:30) over [0x20,0x80) and
// [0xA0,0xC0); Mid.step inlines "Leaf.get" (Leaf.java, called at Mid.java:7) over [0x40,0x60).
// Line records: 0x0 Outer.java:25, 0x20 Mid.java:5, 0x40 Leaf.java:3, 0x60 Mid.java:8,
// 0x80 Outer.java:31, 0xA0 Mid.java:9, 0xC0 Outer.java:33.
inline Builder InlineExample(bool big_endian = false) {
  Builder b(big_endian);
  b.Header();
  b.Samply(2000, {"Outer.java", "Mid.java", "Leaf.java"}, {"Outer.run", "Mid.step", "Leaf.get"},
           {{0, 0, 24, 0, 0}, {1, 1, 4, 0, 0}, {2, 2, 2, 0, 0}},
           {{0, 2, 1, 30, 9}, {1, 1, 2, 7, 5}},
           {{0x20, 0x60}, {0xA0, 0x20}, {0x40, 0x20}},
           {{0x0, 0, 25, 0}, {0x20, 1, 5, 0}, {0x40, 2, 3, 0}, {0x60, 1, 8, 0}, {0x80, 0, 31, 0},
            {0xA0, 1, 9, 0}, {0xC0, 0, 33, 0}});
  b.DebugInfo(2000, 0x10000, {{0x10000, 25, 0, "Outer.java"}, {0x10080, 31, 0, "Outer.java"}});
  b.Load(2001, 0x10000, 0x100, 1, "Outer.run");
  b.Load(2002, 0x20000, 0x40, 2, "Plain.fn");
  b.Close(3000);
  return b;
}

}  // namespace jitdump::testing
