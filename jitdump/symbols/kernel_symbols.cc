#include "jitdump/symbols/kernel_symbols.h"

#include <sys/utsname.h>

#include <algorithm>

namespace jitdump::symbols {

void KernelSymbols::Configure(const Kernel& kernel, const Options& options) {
  build_id_.assign(kernel.build_id.begin(), kernel.build_id.end());
  text_address_ = kernel.text_address;
  text_end_ = kernel.text_end;
  os_release_ = std::string(kernel.os_release);
  kallsyms_path_ = options.kallsyms;
  notes_path_ = options.kernel_notes;
  host_release_ = options.os_release;
  if (host_release_.empty()) {
    struct utsname name {};
    if (uname(&name) == 0) host_release_ = name.release;
  }
  configured_ = true;
  loaded_ = false;
  kallsyms_ = Kallsyms();
  report_ = FileReport();
  report_.recorded_path = "[kernel.kallsyms]";
  report_.build_id = HexString(build_id_);
}

bool KernelSymbols::SameKernel(std::string* why) {
  if (!build_id_.empty()) {
    const std::vector<uint8_t> host = ReadNotesBuildId(notes_path_);
    if (host == build_id_) return true;
    *why = "the recording's kernel has build id " + HexString(build_id_) + ", this machine's " +
           (host.empty() ? "cannot be read (" + notes_path_ + ")" : HexString(host));
    return false;
  }
  if (!os_release_.empty() && os_release_ != host_release_) {
    *why = "the recording's kernel is " + os_release_ + ", this machine's " + host_release_;
    return false;
  }
  // perf's last resort too: a recording that names no kernel is taken to be of this one.
  return true;
}

void KernelSymbols::Load(FileLocator& locator) {
  loaded_ = true;
  if (!configured_) Configure(Kernel{}, Options{});
  std::string why;
  std::string error;
  std::string problem;
  if (SameKernel(&why)) {
    std::string copy;
    if (ReadImageFromCopy(locator, &copy)) {
      report_.found_at = report_.symbols_from = copy;
      report_.found_how = report_.symbols_how = SourceName(Source::kKallsymsCache);
    } else if (Read(kallsyms_path_, &error)) {
      report_.found_at = report_.symbols_from = kallsyms_path_;
      report_.found_how = report_.symbols_how = SourceName(Source::kKallsyms);
      if (build_id_.empty() && os_release_.empty()) problem = "the recording names no kernel: this machine's taken";
    } else {
      problem = error;
    }
  } else {
    problem = why;
  }
  if (!available() && !build_id_.empty()) {
    const std::string cached = locator.KallsymsCachePath(build_id_);
    std::string cache_error;
    if (!cached.empty() && Read(cached, &cache_error)) {
      report_.found_at = report_.symbols_from = cached;
      report_.found_how = report_.symbols_how = SourceName(Source::kKallsymsCache);
      problem.clear();
    } else if (!cached.empty()) {
      problem += (problem.empty() ? "" : "; ") + std::string("no copy of its kallsyms in ") + locator.buildid_dir();
    }
  }
  if (available()) {
    report_.symbol_tables = "kallsyms";
    // perf's kallsyms__delta: the kallsyms' _text against the recording's.
    if (text_address_ != 0 && kallsyms_.text != 0) delta_ = kallsyms_.text - text_address_;
  }
  report_.problem = problem;
}

void KernelSymbols::Want(std::vector<uint64_t> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  wanted_ = std::move(addresses);
}

bool KernelSymbols::ReadImageFromCopy(FileLocator& locator, std::string* path) {
  if (wanted_.empty() || build_id_.empty() || text_address_ == 0) return false;
  // An address past the recording's kernel map (a module's) rules the copy out before it is read.
  if (text_end_ > text_address_ && (wanted_.front() < text_address_ || wanted_.back() >= text_end_)) return false;
  *path = locator.KallsymsCachePath(build_id_);
  std::string error;
  bool image = !path->empty() && Read(*path, &error) && kallsyms_.text != 0;
  const uint64_t delta = kallsyms_.text - text_address_;
  for (size_t i = 0; image && i < wanted_.size(); ++i) {
    const uint64_t at = wanted_[i] + delta;
    image = at >= kallsyms_.text && at < kallsyms_.image_last;
  }
  if (!image) kallsyms_ = Kallsyms();
  return image;
}

bool KernelSymbols::Read(const std::string& path, std::string* error) {
  const KallsymsWanted wanted{wanted_, text_address_};
  if (!ReadKallsyms(path, &kallsyms_, error, wanted_.empty() ? nullptr : &wanted)) return false;
  if (kallsyms_.needs_full_read) return ReadKallsyms(path, &kallsyms_, error);
  return true;
}

const SymbolTable::Symbol* KernelSymbols::Find(uint64_t address, FileLocator& locator, std::string_view* module) {
  asked_ = true;
  if (loaded_ && kallsyms_.filtered && !std::binary_search(wanted_.begin(), wanted_.end(), address)) {
    Release();  // an address the filtered table was not made for: the whole file
  }
  if (!loaded_) Load(locator);
  *module = {};
  if (!available()) return nullptr;
  const uint64_t at = address + delta_;
  *module = kallsyms_.ModuleAt(at);
  return kallsyms_.table.Find(at);
}

}  // namespace jitdump::symbols
