#include "jitdump/symbols/file_symbols.h"

#include <algorithm>
#include <string_view>

#include "jitdump/symbols/dwarf_lines.h"
#include "jitdump/symbols/elf_symbols.h"
#include "jitdump/symbols/mini_debuginfo.h"
#include "jitdump/format/text.h"

namespace jitdump::symbols {
namespace {

constexpr std::string_view kDeleted = " (deleted)";

bool SameBytes(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

std::string_view DirName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// One file the search looked at and kept.
struct Found {
  std::unique_ptr<ElfImage> image;
  std::string path;  // as a report shows it; opens it again, unless `pid` or kOwnVdso
  Source how = Source::kNone;
  uint32_t pid = 0;     // non-zero: the file is `inner` inside this process's root
  std::string inner;
};

// The searches of one mapping: opens candidates, checks their build ids, remembers the first
// reason a candidate was not used.
class Search {
 public:
  explicit Search(FileLocator& locator) : locator_(locator) {}

  void set_build_id(std::span<const uint8_t> id) { build_id_.assign(id.begin(), id.end()); }
  std::span<const uint8_t> build_id() const { return build_id_; }

  // `path` on this machine (or inside `pid`'s root when non-zero).
  std::unique_ptr<ElfImage> Try(const std::string& path, uint32_t pid, std::string* shown) {
    std::string error;
    std::unique_ptr<ElfImage> image = pid != 0 ? locator_.OpenInProcessRoot(pid, path, &error)
                                               : locator_.OpenHost(path, &error);
    *shown = pid != 0 ? "/proc/" + std::to_string(pid) + "/root" + path : locator_.HostPath(path);
    return Check(std::move(image), *shown, error);
  }

  std::unique_ptr<ElfImage> Check(std::unique_ptr<ElfImage> image, const std::string& shown, const std::string& error) {
    if (image == nullptr) {
      // A file that is there but no ELF is worth saying; a missing one is the normal case.
      if (error.find("No such file") == std::string::npos && error.find("Not a directory") == std::string::npos &&
          problem_.empty()) {
        problem_ = error;
        not_elf_ = error.find("ELF") != std::string::npos || error.find("regular") != std::string::npos;
      }
      return nullptr;
    }
    if (!build_id_.empty() && !SameBytes(image->build_id(), build_id_)) {
      if (mismatch_.empty()) {
        mismatch_ = shown + " has build id " + (image->build_id().empty() ? "(none)" : HexString(image->build_id())) +
                    ", the recording's is " + HexString(build_id_) + ": not used";
      }
      return nullptr;
    }
    return image;
  }

  const std::string& mismatch() const { return mismatch_; }
  const std::string& problem() const { return problem_; }
  bool not_elf() const { return not_elf_; }

 private:
  FileLocator& locator_;
  std::vector<uint8_t> build_id_;
  std::string mismatch_;
  std::string problem_;
  bool not_elf_ = false;
};

// The mapped file: its recorded path on this machine, in the process's root, through
// map_files, or perf's copy in the build-id cache.
Found FindRuntime(const Mapping& mapping, std::string_view path, bool deleted, FileLocator& locator, Search& search) {
  Found found;
  std::string shown;
  const std::string clean(path);
  if (mapping.pid != 0 && locator.HasOtherRoot(mapping.pid)) {
    if ((found.image = search.Try(clean, mapping.pid, &shown))) {
      found.path = shown;
      found.how = Source::kProcRoot;
      found.pid = mapping.pid;
      found.inner = clean;
      return found;
    }
  }
  // A deleted file's path holds another file now, unless its build id says otherwise.
  if (!deleted || !search.build_id().empty()) {
    if ((found.image = search.Try(clean, 0, &shown))) {
      found.path = shown;
      found.how = Source::kPath;
      return found;
    }
  }
  if (mapping.pid != 0 && mapping.end > mapping.start) {
    std::string error;
    shown = FileLocator::MapFilesPath(mapping.pid, mapping.start, mapping.end);
    if ((found.image = search.Check(locator.OpenMapFiles(mapping.pid, mapping.start, mapping.end, &error), shown, error))) {
      found.path = shown;
      found.how = Source::kMapFiles;
      return found;
    }
  }
  if (!search.build_id().empty()) {
    shown = locator.BuildIdCachePath(search.build_id(), "elf");
    std::string error;
    if (!shown.empty() && (found.image = search.Check(ElfImage::OpenPath(shown, &error), shown, error))) {
      found.path = shown;
      found.how = Source::kBuildIdCache;
      return found;
    }
  }
  return Found{};
}

Found FindVdso(FileLocator& locator, Search& search, const VdsoPolicy& vdso, std::string* problem) {
  Found found;
  if (!search.build_id().empty()) {
    const std::string cached = locator.BuildIdCachePath(search.build_id(), "vdso");
    std::string error;
    if (!cached.empty() && (found.image = search.Check(ElfImage::OpenPath(cached, &error), cached, error))) {
      found.path = cached;
      found.how = Source::kBuildIdCache;
      return found;
    }
  }
  std::vector<uint8_t> own = FileLocator::OwnVdso();
  if (own.empty()) return Found{};
  std::string error;
  std::unique_ptr<ElfImage> image = ElfImage::OpenBytes(std::move(own), &error);
  if (image == nullptr) return Found{};
  const bool matches = search.build_id().empty() ? vdso.same_kernel : SameBytes(image->build_id(), search.build_id());
  if (!matches) {
    if (problem->empty()) {
      *problem = search.build_id().empty() ? "this machine's vdso is not the recording's: " + vdso.why
                                           : "this machine's vdso has build id " + HexString(image->build_id()) +
                                                 ", the recording's is " + HexString(search.build_id()) + ": not used";
    }
    return Found{};
  }
  found.image = std::move(image);
  found.path = "[vdso]";
  found.how = Source::kOwnVdso;
  return found;
}

}  // namespace

PathKind ClassifyPath(std::string_view path) {
  if (path == "[vdso]") return PathKind::kVdso;
  if (path.empty() || path[0] != '/' || path.starts_with("//")) return PathKind::kNoCode;  // "//anon", "[heap]"
  static constexpr std::string_view kNoFile[] = {"/memfd:", "/dev/", "/SYSV", "/anon_hugepage", "/proc/"};
  for (std::string_view prefix : kNoFile) {
    if (path.starts_with(prefix)) return PathKind::kNoCode;
  }
  // perf's names for JIT code: a perf map ("/tmp/perf-PID.map") is not an ELF file.
  if (path.starts_with("/tmp/perf-") && path.ends_with(".map")) return PathKind::kNoCode;
  return PathKind::kFile;
}

std::optional<uint64_t> FileSymbols::VaddrOfOffset(uint64_t offset) const {
  const ElfImage::Load* found = nullptr;
  for (const ElfImage::Load& load : loads) {
    if (offset < load.offset || offset - load.offset >= load.filesz) continue;
    if (found == nullptr || ((load.flags & PF_X) != 0 && (found->flags & PF_X) == 0)) found = &load;
  }
  if (found == nullptr) return std::nullopt;
  return offset - found->offset + found->vaddr;
}

std::unique_ptr<FileSymbols> LoadFileSymbols(const Mapping& mapping, FileLocator& locator, const Options& options,
                                             const VdsoPolicy& vdso) {
  auto file = std::make_unique<FileSymbols>();
  file->report.recorded_path = std::string(mapping.path);
  file->report.build_id = HexString(mapping.build_id);
  Search search(locator);
  search.set_build_id(mapping.build_id);

  std::string_view path = mapping.path;
  const bool deleted = path.ends_with(kDeleted);
  if (deleted) path.remove_suffix(kDeleted.size());
  const bool is_vdso = ClassifyPath(mapping.path) == PathKind::kVdso;

  std::string vdso_problem;
  Found runtime = is_vdso ? FindVdso(locator, search, vdso, &vdso_problem)
                          : FindRuntime(mapping, path, deleted, locator, search);
  if (runtime.image != nullptr) {
    file->report.found_at = runtime.path;
    file->report.found_how = SourceName(runtime.how);
    if (search.build_id().empty()) search.set_build_id(runtime.image->build_id());
  }
  file->build_id.assign(search.build_id().begin(), search.build_id().end());

  // perf's candidates for the symbol table, in its order. A vdso has no separate debug file.
  std::vector<Found> candidates;
  auto consider = [&](const std::string& candidate, Source how, uint32_t pid) {
    if (candidate.empty()) return;
    std::string shown;
    std::unique_ptr<ElfImage> image;
    if (how == Source::kBuildIdCache || how == Source::kBuildIdCacheDebug) {
      std::string error;
      shown = candidate;
      image = search.Check(ElfImage::OpenPath(candidate, &error), candidate, error);
    } else {
      image = search.Try(candidate, pid, &shown);
    }
    if (image != nullptr) candidates.push_back(Found{std::move(image), shown, how, pid, pid != 0 ? candidate : ""});
  };
  if (!is_vdso) {
    const uint32_t in_root = runtime.how == Source::kProcRoot ? runtime.pid : 0;
    const std::string dir(DirName(path));
    const std::string base(BaseName(path));
    const std::string link = runtime.image != nullptr ? runtime.image->debuglink() : std::string();
    if (!link.empty()) {
      consider(dir + "/" + link, Source::kDebuglink, in_root);
      consider(dir + "/.debug/" + link, Source::kDebuglink, in_root);
      for (const std::string& debug_dir : options.debug_dirs) consider(debug_dir + dir + "/" + link, Source::kDebuglink, 0);
    }
    if (!search.build_id().empty()) {
      consider(locator.BuildIdCachePath(search.build_id(), "elf"), Source::kBuildIdCache, 0);
      consider(locator.BuildIdCachePath(search.build_id(), "debug"), Source::kBuildIdCacheDebug, 0);
    }
    for (const std::string& debug_dir : options.debug_dirs) {
      consider(debug_dir + std::string(path) + ".debug", Source::kDebugPath, 0);
      consider(debug_dir + std::string(path), Source::kDebugPath, 0);
    }
    if (!search.build_id().empty()) {
      const std::string hex = HexString(search.build_id());
      for (const std::string& debug_dir : options.debug_dirs) {
        consider(debug_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug", Source::kDebugBuildId, 0);
      }
    }
  }
  // The mapped file itself comes after the debug files (perf's SYSTEM_PATH_DSO).
  const size_t runtime_index = candidates.size();
  const bool have_runtime = runtime.image != nullptr;
  if (have_runtime) candidates.push_back(std::move(runtime));
  if (!is_vdso) {
    const std::string dir(DirName(path));
    if (path.starts_with("/usr/lib/")) {
      for (const std::string& debug_dir : options.debug_dirs) consider(debug_dir + std::string(path.substr(4)), Source::kDebugPath, 0);
    }
    consider(dir + "/.debug/" + std::string(BaseName(path)), Source::kDebugPath, 0);
  }

  const Found* runtime_found = have_runtime ? &candidates[runtime_index] : nullptr;
  const Found* syms = nullptr;
  const Found* dynamic = nullptr;  // perf's runtime_ss: the first with a .dynsym
  const Found* dwarf = nullptr;
  for (const Found& candidate : candidates) {
    GElf_Shdr shdr;
    if (syms == nullptr && candidate.image->HasSymtab()) syms = &candidate;
    if (dynamic == nullptr && candidate.image->FindSection(".dynsym", &shdr) != nullptr && shdr.sh_type == SHT_DYNSYM) {
      dynamic = &candidate;
    }
    if (dwarf == nullptr && candidate.image->HasDwarf()) dwarf = &candidate;
  }
  if (syms == nullptr) syms = dynamic;
  if (dynamic == nullptr) dynamic = syms;

  if (syms == nullptr) {
    if (runtime_found != nullptr) {
      // The mapped file is there but holds no symbol table.
      const std::string damage = runtime_found->image->Damage();
      file->status = damage.empty() ? Outcome::kNoSymbol : Outcome::kNotElf;
      file->report.problem = runtime_found->path + (damage.empty() ? ": no symbol table" : ": " + damage);
    } else if (!search.mismatch().empty()) {
      file->status = Outcome::kBuildIdMismatch;
      file->report.problem = search.mismatch();
    } else if (search.not_elf()) {
      file->status = Outcome::kNotElf;
      file->report.problem = search.problem();
    } else {
      file->status = Outcome::kNoFile;
      file->report.problem = !vdso_problem.empty() ? vdso_problem
                             : !search.problem().empty() ? search.problem()
                                                         : "no file " + std::string(mapping.path) +
                                                               (file->build_id.empty() ? "" : " with build id " + HexString(file->build_id)) +
                                                               " found";
    }
    return file;
  }

  // Program headers: the mapped file's (perf: the runtime file's), else the symbol file's.
  const ElfImage& layout = runtime_found != nullptr ? *runtime_found->image : *dynamic->image;
  file->loads = layout.loads();
  SymbolTable::Builder builder;
  std::vector<std::string> tables;
  if (AddElfSymbols(*syms->image, layout, SymbolSection::kSymtab, &builder) > 0) tables.push_back(".symtab");
  if (AddElfSymbols(*syms->image, layout, SymbolSection::kDynsym, &builder) > 0) tables.push_back(".dynsym");
  if (!syms->image->HasSymtab()) {
    // MiniDebugInfo names the local functions a strip removed (perf 6.1 does not read it).
    std::string error;
    if (std::unique_ptr<ElfImage> mini = OpenMiniDebugInfo(layout, &error)) {
      if (AddElfSymbols(*mini, layout, SymbolSection::kSymtab, &builder) > 0) tables.push_back(".gnu_debugdata");
    } else if (!error.empty() && file->report.problem.empty()) {
      file->report.problem = error;
    }
  }
  if (builder.size() > 0 && AddPltSymbols(*dynamic->image, &builder) > 0) tables.push_back(".plt");
  file->table = builder.Build();
  file->status = Outcome::kSymbol;
  file->report.symbols_from = syms->path;
  file->report.symbols_how = SourceName(syms->how);
  for (const std::string& table : tables) {
    if (!file->report.symbol_tables.empty()) file->report.symbol_tables += "+";
    file->report.symbol_tables += table;
  }
  if (file->report.found_at.empty()) {
    file->report.problem = "the mapped file was not found: its debug file's symbols only";
  }
  if (file->report.problem.empty() && !search.mismatch().empty()) file->report.problem = search.mismatch();
  if (dwarf != nullptr && options.inline_chains) {
    file->dwarf_path = dwarf->pid != 0 ? dwarf->inner : dwarf->path;
    file->dwarf_pid = dwarf->pid;
    file->dwarf_own_vdso = dwarf->how == Source::kOwnVdso;
    file->report.debug_info_from = dwarf->path;
  }
  return file;
}

bool OpenFileDwarf(FileSymbols& file, FileLocator& locator, uint64_t max_bytes) {
  if (file.dwarf != nullptr) return true;
  if (file.dwarf_refused || file.dwarf_path.empty()) return false;
  std::string error;
  std::unique_ptr<ElfImage> image;
  if (file.dwarf_own_vdso) {
    image = ElfImage::OpenBytes(FileLocator::OwnVdso(), &error);
  } else if (file.dwarf_pid != 0) {
    image = locator.OpenInProcessRoot(file.dwarf_pid, file.dwarf_path, &error);
  } else {
    image = ElfImage::OpenPath(file.dwarf_path, &error);
  }
  if (image != nullptr && !file.build_id.empty() && !SameBytes(image->build_id(), file.build_id)) {
    error = file.dwarf_path + " changed since its symbols were read (another build id)";
    image.reset();
  }
  if (image != nullptr) file.dwarf = DwarfLines::Open(std::move(image), max_bytes, &error);
  if (file.dwarf == nullptr) {
    file.dwarf_refused = true;
    file.report.debug_info_from.clear();
    if (file.report.problem.empty()) file.report.problem = "DWARF of " + file.dwarf_path + " not used: " + error;
    return false;
  }
  file.dwarf_bytes = file.dwarf->bytes();
  return true;
}

}  // namespace jitdump::symbols
