#include "jitdump/report/profile.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "jitdump/report/flat_index.h"

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

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

uint64_t Finish(uint64_t h) {
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

}  // namespace

// Open addressing over the indexes of `count` items: the index of the item `equal` accepts
// among those with this hash, or `count` (the next item's index) placed as new.
template <typename Equal>
uint32_t ProfileBuilder::Intern(std::vector<Slot>& slots, size_t count, uint64_t hash, bool* inserted, Equal equal) {
  if (2 * (count + 1) > slots.size()) {
    std::vector<Slot> old;
    old.swap(slots);
    slots.resize(old.empty() ? 1024 : 2 * old.size());
    for (const Slot& slot : old) {
      if (slot.index == UINT32_MAX) continue;
      size_t i = slot.hash & (slots.size() - 1);
      while (slots[i].index != UINT32_MAX) i = (i + 1) & (slots.size() - 1);
      slots[i] = slot;
    }
  }
  const auto low = static_cast<uint32_t>(hash);
  for (size_t i = low & (slots.size() - 1);; i = (i + 1) & (slots.size() - 1)) {
    Slot& slot = slots[i];
    if (slot.index == UINT32_MAX) {
      slot.hash = low;
      slot.index = static_cast<uint32_t>(count);
      *inserted = true;
      return slot.index;
    }
    if (slot.hash == low && equal(slot.index)) {
      *inserted = false;
      return slot.index;
    }
  }
}

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
  const uint64_t hash = Finish(Mix(Mix(std::hash<std::string_view>()(name), std::hash<std::string_view>()(file)),
                                   static_cast<uint64_t>(kind)));
  bool inserted;
  const uint32_t id = Intern(function_slots_, profile_.functions.size(), hash, &inserted, [&](uint32_t i) {
    const Function& f = profile_.functions[i];
    return f.kind == kind && f.name == name && f.file == file;
  });
  if (inserted) profile_.functions.push_back(Function{std::string(name), std::string(file), kind});
  return id;
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

void ProfileBuilder::ReleaseIndexes() {
  std::vector<Slot>().swap(location_slots_);
  stacks_.ReleaseSlots();
  indexes_released_ = true;
}

uint32_t ProfileBuilder::AddLocation(uint64_t address, uint32_t mapping, const std::vector<Line>& lines) {
  if (indexes_released_) throw std::logic_error("a location added after the profile builder's indexes were released");
  uint64_t h = Mix(address, mapping);
  for (const Line& line : lines) h = Mix(Mix(h, line.function), line.line);
  bool inserted;
  const uint32_t id = Intern(location_slots_, profile_.locations.size(), Finish(h), &inserted, [&](uint32_t i) {
    const Location& l = profile_.locations[i];
    if (l.address != address || l.mapping != mapping || l.lines.size() != lines.size()) return false;
    for (size_t k = 0; k < lines.size(); ++k) {
      if (l.lines[k].function != lines[k].function || l.lines[k].line != lines[k].line) return false;
    }
    return true;
  });
  if (inserted) profile_.locations.push_back(Location{address, mapping, lines});
  return id;
}

uint32_t ProfileBuilder::AddUnnamedLocation(uint64_t address, uint32_t mapping) {
  profile_.locations.push_back(Location{address, mapping, {}});
  return static_cast<uint32_t>(profile_.locations.size() - 1);
}

uint32_t ProfileBuilder::AddProcess(uint32_t pid, std::string_view command, std::string_view dump) {
  profile_.processes.push_back(Process{pid, std::string(command), std::string(dump), 0, std::string()});
  return static_cast<uint32_t>(profile_.processes.size() - 1);
}

uint32_t ProfileBuilder::ThreadId(std::string_view thread) {
  ThreadMemo& memo = thread_memo_[MixBits(reinterpret_cast<uintptr_t>(thread.data())) % thread_memo_.size()];
  // The bytes are compared too: a caller may reuse a buffer for another name.
  if (memo.data != nullptr && memo.data == thread.data() && thread_names_[memo.id] == thread) return memo.id;
  const auto it = thread_ids_.find(thread);
  uint32_t id;
  if (it != thread_ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<uint32_t>(thread_names_.size());
    thread_names_.emplace_back(thread);
    thread_ids_.emplace(std::string(thread), id);
  }
  memo = ThreadMemo{thread.data(), id};
  return id;
}

void ProfileBuilder::AddSample(const std::vector<uint32_t>& locations, uint32_t process, std::string_view thread,
                               uint64_t count, uint64_t nanos) {
  // Carried out at the next sample's: the stack's slot comes from memory meanwhile.
  stacks_.AddLater(locations, process, ThreadId(thread), count, nanos);
}

Profile ProfileBuilder::Take() {
  Profile out = std::move(profile_);
  // In path order: the outputs walk them so (SamplesByPath finds them sorted).
  stacks_.SortByPath();
  out.samples.reserve(out.samples.size() + stacks_.size());
  constexpr size_t kAhead = 8;  // records in path order lie anywhere in megabytes of them
  for (size_t i = 0; i < stacks_.size(); ++i) {
    stacks_.Prefetch(i + kAhead);
    Sample& sample = out.samples.emplace_back();
    const StackTable::Stack stack = stacks_.Get(i, &sample.locations);
    sample.process = stack.process;
    sample.thread = stack.thread;
    sample.count = stack.count;
    sample.nanos = stack.nanos;
  }
  out.threads = std::move(thread_names_);
  *this = ProfileBuilder();
  return out;
}

}  // namespace jitdump::report
