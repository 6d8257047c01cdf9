#include "jitdump/symbols/mini_debuginfo.h"

#include <lzma.h>

#include <algorithm>
#include <vector>

namespace jitdump::symbols {

std::unique_ptr<ElfImage> OpenMiniDebugInfo(const ElfImage& file, std::string* error) {
  error->clear();
  GElf_Shdr shdr;
  Elf_Scn* scn = file.FindSection(".gnu_debugdata", &shdr);
  if (scn == nullptr || shdr.sh_type != SHT_PROGBITS) return nullptr;
  Elf_Data* data = file.SectionData(scn, kMaxMiniDebugInfoBytes);
  if (data == nullptr || data->d_buf == nullptr || data->d_size == 0) {
    *error = ".gnu_debugdata unreadable";
    return nullptr;
  }
  lzma_stream stream = LZMA_STREAM_INIT;
  // The decoder's own memory is bounded too (xz's default presets need a few MB).
  if (lzma_stream_decoder(&stream, 256ull << 20, 0) != LZMA_OK) {
    *error = ".gnu_debugdata: no xz decoder";
    return nullptr;
  }
  std::vector<uint8_t> out;
  stream.next_in = static_cast<const uint8_t*>(data->d_buf);
  stream.avail_in = data->d_size;
  lzma_ret ret = LZMA_OK;
  while (ret == LZMA_OK) {
    if (out.size() >= kMaxMiniDebugInfoBytes) {
      ret = LZMA_MEMLIMIT_ERROR;
      break;
    }
    const size_t grow = std::min<size_t>(std::max<size_t>(out.size(), 64 * 1024), kMaxMiniDebugInfoBytes - out.size());
    const size_t used = out.size();
    out.resize(used + grow);
    stream.next_out = out.data() + used;
    stream.avail_out = grow;
    ret = lzma_code(&stream, LZMA_FINISH);
    out.resize(used + grow - stream.avail_out);
  }
  lzma_end(&stream);
  if (ret != LZMA_STREAM_END) {
    *error = ret == LZMA_MEMLIMIT_ERROR ? ".gnu_debugdata larger than the limit" : ".gnu_debugdata: not xz data";
    return nullptr;
  }
  std::string open_error;
  std::unique_ptr<ElfImage> image = ElfImage::OpenBytes(std::move(out), &open_error);
  if (image == nullptr) *error = ".gnu_debugdata: " + open_error;
  return image;
}

}  // namespace jitdump::symbols
