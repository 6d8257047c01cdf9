#include "jitdump/symbols/symbolizer.h"

#include <algorithm>
#include <unordered_map>

#include "jitdump/symbols/demangle.h"
#include "jitdump/symbols/dwarf_lines.h"
#include "jitdump/symbols/file_locator.h"
#include "jitdump/symbols/file_symbols.h"
#include "jitdump/symbols/kernel_symbols.h"
#include "jitdump/symbols/string_pool.h"

namespace jitdump::symbols {
namespace {

// Inline chains remembered per (file, address) before the cache starts over: a profile asks
// for the same addresses again and again, and a chain costs a DWARF scope walk.
constexpr size_t kMaxRememberedChains = 1u << 16;

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSymbol: return "symbol";
    case Outcome::kNoSymbol: return "no-symbol";
    case Outcome::kNoFile: return "no-file";
    case Outcome::kBuildIdMismatch: return "build-id-mismatch";
    case Outcome::kNotElf: return "not-elf";
    case Outcome::kNoCode: return "no-code";
    case Outcome::kKernelUnavailable: return "kernel-unavailable";
  }
  return "no-file";
}

struct Symbolizer::State {
  explicit State(Options o)
      : options(std::move(o)), locator(options.root, options.buildid_dir.empty() ? DefaultBuildIdDir() : options.buildid_dir) {}

  Options options;
  FileLocator locator;
  StringPool strings;
  std::vector<Frame> frames;
  std::vector<SourceFrame> chain;

  std::vector<std::unique_ptr<FileSymbols>> files;  // in the order first asked for
  std::unordered_map<std::string, FileSymbols*> by_key;
  std::string key;  // reused for lookups

  // The last mapping looked up (most lookups follow one in the same file).
  FileSymbols* last_file = nullptr;
  std::string last_path;
  std::vector<uint8_t> last_build_id;
  uint32_t last_pid = 0;

  // Open DWARF, least recently used closed first.
  uint64_t use_clock = 0;
  uint64_t dwarf_bytes = 0;
  std::vector<FileSymbols*> open_dwarf;

  struct ChainKey {
    const FileSymbols* file;
    uint64_t offset;
    bool operator==(const ChainKey&) const = default;
  };
  struct ChainKeyHash {
    size_t operator()(const ChainKey& k) const {
      return std::hash<const void*>{}(k.file) ^ (std::hash<uint64_t>{}(k.offset) * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<ChainKey, std::vector<Frame>, ChainKeyHash> chains;

  KernelSymbols kernel;
  bool kernel_set = false;

  FileSymbols* FileFor(const Mapping& mapping);
  std::string_view NameOf(FileSymbols& file, const SymbolTable::Symbol& symbol);
  DwarfLines* DwarfOf(FileSymbols& file);
  Lookup One(Outcome outcome, uint64_t offset) {
    frames.assign(1, Frame{{}, offset, {}, 0, false});
    return Lookup{outcome, frames, {}};
  }
};

FileSymbols* Symbolizer::State::FileFor(const Mapping& mapping) {
  if (last_file != nullptr && last_pid == mapping.pid && last_path == mapping.path &&
      std::equal(last_build_id.begin(), last_build_id.end(), mapping.build_id.begin(), mapping.build_id.end())) {
    return last_file;
  }
  // A build id names the file wherever it is; without one, a container's path is its own.
  key.clear();
  if (!mapping.build_id.empty()) {
    key = "b:" + HexString(mapping.build_id);
  } else {
    key = "p:";
    if (mapping.pid != 0 && locator.HasOtherRoot(mapping.pid)) key += std::to_string(mapping.pid) + ":";
    key += mapping.path;
  }
  FileSymbols* file = nullptr;
  auto load = [&] {
    VdsoPolicy vdso;
    if (ClassifyPath(mapping.path) == PathKind::kVdso) vdso.same_kernel = kernel.SameKernel(&vdso.why);
    return LoadFileSymbols(mapping, locator, options, vdso);
  };
  if (auto it = by_key.find(key); it != by_key.end()) {
    file = it->second;
    if (file->released) {
      // Read again where it was (its report keeps counting).
      const uint64_t lookups = file->report.lookups;
      const uint64_t named = file->report.named;
      *file = std::move(*load());
      file->report.lookups = lookups;
      file->report.named = named;
    }
  } else {
    files.push_back(load());
    file = files.back().get();
    by_key.emplace(key, file);
  }
  last_file = file;
  last_path.assign(mapping.path);
  last_build_id.assign(mapping.build_id.begin(), mapping.build_id.end());
  last_pid = mapping.pid;
  return file;
}

std::string_view Symbolizer::State::NameOf(FileSymbols& file, const SymbolTable::Symbol& symbol) {
  if (file.names.empty()) file.names.resize(file.table.symbols().size());
  const size_t index = static_cast<size_t>(&symbol - file.table.symbols().data());
  std::string_view& name = file.names[index];
  if (name.data() == nullptr) {
    const std::string_view raw = file.table.Name(symbol);
    name = symbol.spelled ? strings.Intern(raw) : strings.Intern(DemangleLikePerf(raw));
  }
  return name;
}

DwarfLines* Symbolizer::State::DwarfOf(FileSymbols& file) {
  file.dwarf_last_use = ++use_clock;
  if (file.dwarf != nullptr) return file.dwarf.get();
  if (!OpenFileDwarf(file, locator, options.max_dwarf_bytes)) return nullptr;
  open_dwarf.push_back(&file);
  dwarf_bytes += file.dwarf_bytes;
  // Close the least recently used until what is open fits (the one just opened stays).
  while (open_dwarf.size() > 1 && (dwarf_bytes > options.max_dwarf_bytes || open_dwarf.size() > options.max_open_dwarf)) {
    auto oldest = std::min_element(open_dwarf.begin(), open_dwarf.end(), [](const FileSymbols* a, const FileSymbols* b) {
      return a->dwarf_last_use < b->dwarf_last_use;
    });
    if (*oldest == &file) break;
    dwarf_bytes -= (*oldest)->dwarf_bytes;
    (*oldest)->dwarf.reset();
    open_dwarf.erase(oldest);
  }
  return file.dwarf.get();
}

Symbolizer::Symbolizer(Options options) : state_(std::make_unique<State>(std::move(options))) {}

Symbolizer::~Symbolizer() = default;

void Symbolizer::SetRecordingKernel(const Kernel& kernel) {
  state_->kernel.Configure(kernel, state_->options);
  state_->kernel_set = true;
}

Lookup Symbolizer::Find(const Mapping& mapping, uint64_t address) {
  State& s = *state_;
  if (!s.kernel_set) SetRecordingKernel(Kernel{});
  // perf's map_ip: the address as an offset into the mapped file.
  const uint64_t offset = address - mapping.start + mapping.pgoff;
  if (ClassifyPath(mapping.path) == PathKind::kNoCode) return s.One(Outcome::kNoCode, address);
  FileSymbols& file = *s.FileFor(mapping);
  ++file.report.lookups;
  if (file.status != Outcome::kSymbol) return s.One(file.status, offset);
  const SymbolTable::Symbol* symbol = file.table.Find(offset);
  if (symbol == nullptr) return s.One(Outcome::kNoSymbol, offset);
  ++file.report.named;
  const std::string_view name = s.NameOf(file, *symbol);
  const uint64_t symbol_offset = offset - symbol->start;

  if (!file.dwarf_path.empty() && !file.dwarf_refused) {
    const State::ChainKey key{&file, offset};
    if (auto it = s.chains.find(key); it != s.chains.end()) return Lookup{Outcome::kSymbol, it->second, {}};
    s.frames.clear();
    const std::optional<uint64_t> vaddr = file.VaddrOfOffset(offset);
    DwarfLines* dwarf = vaddr ? s.DwarfOf(file) : nullptr;
    if (dwarf != nullptr && dwarf->Chain(*vaddr, &s.chain)) {
      for (const SourceFrame& source : s.chain) {
        s.frames.push_back(Frame{source.inlined ? s.strings.Intern(source.function) : name, source.inlined ? 0 : symbol_offset,
                                 s.strings.Intern(source.file), source.line, source.inlined});
      }
      // The owning function is the ELF symbol perf names (DWARF may call it otherwise: a clone
      // "f.constprop.0" is "f" there).
      if (s.frames.back().inlined) s.frames.push_back(Frame{name, symbol_offset, {}, 0, false});
    } else {
      s.frames.push_back(Frame{name, symbol_offset, {}, 0, false});
    }
    if (s.chains.size() >= kMaxRememberedChains) s.chains.clear();
    auto [it, inserted] = s.chains.emplace(key, s.frames);
    return Lookup{Outcome::kSymbol, it->second, {}};
  }
  s.frames.assign(1, Frame{name, symbol_offset, {}, 0, false});
  return Lookup{Outcome::kSymbol, s.frames, {}};
}

Lookup Symbolizer::FindKernel(uint64_t address) {
  State& s = *state_;
  if (!s.kernel_set) SetRecordingKernel(Kernel{});
  std::string_view module;
  FileReport& report = s.kernel.report();
  ++report.lookups;
  const SymbolTable::Symbol* symbol = s.kernel.Find(address, s.locator, &module);
  if (!s.kernel.available()) return s.One(Outcome::kKernelUnavailable, address);
  if (symbol == nullptr) {
    Lookup lookup = s.One(Outcome::kNoSymbol, address);
    lookup.module = module;
    return lookup;
  }
  ++report.named;
  s.frames.assign(1, Frame{s.strings.Intern(s.kernel.Name(*symbol)), address - s.kernel.Start(*symbol), {}, 0, false});
  return Lookup{Outcome::kSymbol, s.frames, module.empty() ? std::string_view() : s.strings.Intern(module)};
}

void Symbolizer::WantKernel(std::vector<uint64_t> addresses) { state_->kernel.Want(std::move(addresses)); }

void Symbolizer::Release() {
  State& s = *state_;
  for (const std::unique_ptr<FileSymbols>& file : s.files) {
    file->table = SymbolTable();
    decltype(file->names)().swap(file->names);
    file->dwarf.reset();
    file->released = true;
  }
  s.open_dwarf.clear();
  s.dwarf_bytes = 0;
  decltype(s.chains)().swap(s.chains);
  s.strings.Clear();
  decltype(s.frames)().swap(s.frames);
  decltype(s.chain)().swap(s.chain);
  s.last_file = nullptr;
  s.kernel.Release();
}

std::vector<FileReport> Symbolizer::Files() const {
  std::vector<FileReport> reports;
  for (const auto& file : state_->files) reports.push_back(file->report);
  if (state_->kernel.asked()) reports.push_back(state_->kernel.report());
  return reports;
}

}  // namespace jitdump::symbols
