// MiniDebugInfo: the xz-compressed ELF some distributions (Fedora, RHEL, SUSE) keep in a
// stripped binary's .gnu_debugdata section, whose .symtab names the local functions the strip
// removed. perf 6.1 ignores it; reading it names those functions instead of "[unknown]".
// Decompressed through liblzma (Debian liblzma-dev) into a buffer of bounded size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {

// Larger images are refused (real ones are a few hundred KB).
inline constexpr uint64_t kMaxMiniDebugInfoBytes = 64ull << 20;

// The image in `file`'s .gnu_debugdata; nullptr when there is none or it does not decompress
// into an ELF (`error` says which, empty when there is none).
std::unique_ptr<ElfImage> OpenMiniDebugInfo(const ElfImage& file, std::string* error);

}  // namespace jitdump::symbols
