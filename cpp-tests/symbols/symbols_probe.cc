// Drives jitdump::symbols::Symbolizer from a script: the differential test against perf
// (scripts/tests/perf/test_native_symbols.py) sends the recording's mappings and addresses on
// stdin, one request per line, and reads one JSON object per answer.
//
//   symbols_probe [--buildid-dir DIR] [--debug-dir DIR]... [--root DIR] [--no-inline]
//                 [--kallsyms FILE] [--kernel-notes FILE] [--os-release R] [--max-dwarf-mb N]
//                 [--repeat N] [--want-kernel]
//
// Requests (tab-separated; hexadecimal numbers without 0x; "-" for an empty build id/release):
//   kernel  BUILD_ID  TEXT_ADDRESS  OS_RELEASE        the recording's kernel (no answer)
//   user    PID  START  END  PGOFF  BUILD_ID  ADDRESS  PATH
//   kaddr   ADDRESS
// Answer: {"outcome": "...", "module": "...", "frames": [{"function", "offset", "file", "line", "inlined"}]}
// At the end of input: {"files": [FileReport as objects]}.
// --repeat N: every lookup is made N times (answered once) and the time the lookups took is
// printed on stderr ("lookups N seconds S"), for measurements.
// --want-kernel: the kernel addresses are announced (WantKernel) before the first is looked up,
// as `jitdump report` announces them: the kernel's symbols are read only for them, from perf's
// kallsyms copy when all are in the kernel image.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jitdump/symbols/symbolizer.h"

namespace {

using jitdump::symbols::Frame;
using jitdump::symbols::Lookup;

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return fields;
}

uint64_t Hex(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 16); }

std::vector<uint8_t> Bytes(const std::string& hex) {
  std::vector<uint8_t> bytes;
  if (hex == "-") return bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

nlohmann::json Answer(const Lookup& lookup) {
  nlohmann::json frames = nlohmann::json::array();
  for (const Frame& f : lookup.frames) {
    frames.push_back({{"function", std::string(f.function)},
                      {"offset", f.offset},
                      {"file", std::string(f.file)},
                      {"line", f.line},
                      {"inlined", f.inlined}});
  }
  return {{"outcome", jitdump::symbols::OutcomeName(lookup.outcome)}, {"module", std::string(lookup.module)}, {"frames", frames}};
}

}  // namespace

int main(int argc, char** argv) {
  jitdump::symbols::Options options;
  bool default_debug_dirs = true;
  uint64_t repeat = 1;
  bool want_kernel = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "symbols_probe: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--buildid-dir") options.buildid_dir = value();
    else if (arg == "--debug-dir") {
      if (default_debug_dirs) options.debug_dirs.clear();
      default_debug_dirs = false;
      options.debug_dirs.push_back(value());
    } else if (arg == "--root") options.root = value();
    else if (arg == "--no-inline") options.inline_chains = false;
    else if (arg == "--kallsyms") options.kallsyms = value();
    else if (arg == "--kernel-notes") options.kernel_notes = value();
    else if (arg == "--os-release") options.os_release = value();
    else if (arg == "--max-dwarf-mb") options.max_dwarf_bytes = std::stoull(value()) << 20;
    else if (arg == "--repeat") repeat = std::max<uint64_t>(1, std::stoull(value()));
    else if (arg == "--want-kernel") want_kernel = true;
    else {
      std::cerr << "symbols_probe: unknown argument " << arg << "\n";
      return 2;
    }
  }
  jitdump::symbols::Symbolizer symbolizer(options);
  std::vector<uint8_t> kernel_build_id;
  std::string kernel_release;
  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
  std::vector<uint64_t> kernel_addresses;
  for (size_t i = 0; want_kernel && i < lines.size(); ++i) {
    const std::vector<std::string> f = Split(lines[i]);
    if (f[0] == "kaddr" && f.size() == 2) kernel_addresses.push_back(Hex(f[1]));
  }
  uint64_t lookups = 0;
  std::chrono::duration<double> spent{0};
  for (const std::string& line : lines) {
    const std::vector<std::string> f = Split(line);
    if (f[0] == "kernel" && f.size() == 4) {
      kernel_build_id = Bytes(f[1]);
      kernel_release = f[3] == "-" ? "" : f[3];
      symbolizer.SetRecordingKernel({kernel_build_id, Hex(f[2]), kernel_release});
    } else if (f[0] == "user" && f.size() == 8) {
      const std::vector<uint8_t> build_id = Bytes(f[5]);
      const jitdump::symbols::Mapping mapping{f[7], build_id, Hex(f[2]), Hex(f[3]), Hex(f[4]),
                                              static_cast<uint32_t>(std::stoul(f[1]))};
      const uint64_t address = Hex(f[6]);
      const auto t0 = std::chrono::steady_clock::now();
      for (uint64_t i = 1; i < repeat; ++i) symbolizer.Find(mapping, address);
      const Lookup found = symbolizer.Find(mapping, address);
      spent += std::chrono::steady_clock::now() - t0;
      lookups += repeat;
      std::cout << Answer(found).dump() << "\n";
    } else if (f[0] == "kaddr" && f.size() == 2) {
      if (want_kernel) {
        symbolizer.WantKernel(std::move(kernel_addresses));
        want_kernel = false;
      }
      const uint64_t address = Hex(f[1]);
      const auto t0 = std::chrono::steady_clock::now();
      for (uint64_t i = 1; i < repeat; ++i) symbolizer.FindKernel(address);
      const Lookup found = symbolizer.FindKernel(address);
      spent += std::chrono::steady_clock::now() - t0;
      lookups += repeat;
      std::cout << Answer(found).dump() << "\n";
    } else {
      std::cerr << "symbols_probe: bad request: " << line << "\n";
      return 2;
    }
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& r : symbolizer.Files()) {
    files.push_back({{"recorded_path", r.recorded_path}, {"build_id", r.build_id}, {"found_at", r.found_at},
                     {"found_how", r.found_how}, {"symbols_from", r.symbols_from}, {"symbols_how", r.symbols_how},
                     {"symbol_tables", r.symbol_tables}, {"debug_info_from", r.debug_info_from},
                     {"problem", r.problem}, {"lookups", r.lookups}, {"named", r.named}});
  }
  std::cout << nlohmann::json{{"files", files}}.dump() << "\n";
  std::cerr << "lookups " << lookups << " seconds " << spent.count() << "\n";
  return 0;
}
