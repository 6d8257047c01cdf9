#include "jitdump/report/profile.h"

#include <cstring>

namespace jitdump::report {
namespace {

// Interning keys: the fields as bytes, each string preceded by its length, so no two
// different tuples can produce the same key.
void Put(std::string& key, std::string_view text) {
  const uint64_t size = text.size();
  key.append(reinterpret_cast<const char*>(&size), sizeof size);
  key.append(text);
}

template <typename T>
void PutValue(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kCompiled: return "compiled";
    case FrameKind::kInlined: return "inlined";
    case FrameKind::kInterpreted: return "interpreted";
    case FrameKind::kStub: return "stub";
    case FrameKind::kNative: return "native";
    case FrameKind::kKernel: return "kernel";
    case FrameKind::kUnknown: return "unknown";
  }
  return "unknown";
}

uint32_t ProfileBuilder::AddFunction(std::string_view name, std::string_view file, FrameKind kind) {
  std::string key;
  Put(key, name);
  Put(key, file);
  PutValue(key, kind);
  const auto [it, inserted] = function_ids_.try_emplace(std::move(key), static_cast<uint32_t>(profile_.functions.size()));
  if (inserted) profile_.functions.push_back(Function{std::string(name), std::string(file), kind});
  return it->second;
}

uint32_t ProfileBuilder::AddMapping(std::string_view file, uint64_t start, uint64_t limit, uint64_t offset) {
  std::string key;
  Put(key, file);
  PutValue(key, start);
  PutValue(key, limit);
  PutValue(key, offset);
  const auto [it, inserted] = mapping_ids_.try_emplace(std::move(key), static_cast<uint32_t>(profile_.mappings.size()));
  if (inserted) profile_.mappings.push_back(Mapping{std::string(file), start, limit, offset});
  return it->second;
}

uint32_t ProfileBuilder::AddLocation(uint64_t address, uint32_t mapping, const std::vector<Line>& lines) {
  std::string key;
  PutValue(key, address);
  PutValue(key, mapping);
  for (const Line& line : lines) {
    PutValue(key, line.function);
    PutValue(key, line.line);
  }
  const auto [it, inserted] = location_ids_.try_emplace(std::move(key), static_cast<uint32_t>(profile_.locations.size()));
  if (inserted) profile_.locations.push_back(Location{address, mapping, lines});
  return it->second;
}

uint32_t ProfileBuilder::AddProcess(uint32_t pid, std::string_view command, std::string_view dump) {
  profile_.processes.push_back(Process{pid, std::string(command), std::string(dump)});
  return static_cast<uint32_t>(profile_.processes.size() - 1);
}

void ProfileBuilder::AddSample(const std::vector<uint32_t>& locations, uint32_t process, std::string_view thread,
                               uint64_t count, uint64_t nanos) {
  std::string key;
  PutValue(key, process);
  Put(key, thread);
  key.append(reinterpret_cast<const char*>(locations.data()), locations.size() * sizeof(uint32_t));
  const auto [it, inserted] = sample_ids_.try_emplace(std::move(key), static_cast<uint32_t>(profile_.samples.size()));
  if (inserted) profile_.samples.push_back(Sample{locations, process, std::string(thread), 0, 0});
  Sample& sample = profile_.samples[it->second];
  sample.count += count;
  sample.nanos += nanos;
}

Profile ProfileBuilder::Take() {
  Profile out = std::move(profile_);
  *this = ProfileBuilder();
  return out;
}

}  // namespace jitdump::report
