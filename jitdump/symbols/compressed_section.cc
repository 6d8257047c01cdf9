#include "jitdump/symbols/compressed_section.h"

#include <libdeflate.h>

#include <cstring>
#include <new>

namespace jitdump::symbols {
namespace {

constexpr unsigned char kNativeData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
// libelf's bound: zlib never compresses better than 1032:1, so a header that claims more is
// damaged (and would have us allocate for nothing).
constexpr size_t kMaxRatio = 1032;

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// zlib streams back to back fill exactly `out_size` bytes (libelf accepts several streams).
bool InflateZlib(const unsigned char* in, size_t in_size, char* out, size_t out_size) {
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> decompressor(libdeflate_alloc_decompressor());
  if (decompressor == nullptr) return false;
  size_t done = 0;
  while (in_size > 0) {
    size_t used_in = 0;
    size_t produced = 0;
    if (libdeflate_zlib_decompress_ex(decompressor.get(), in, in_size, out + done, out_size - done, &used_in,
                                      &produced) != LIBDEFLATE_SUCCESS ||
        used_in == 0) {
      return false;
    }
    in += used_in;
    in_size -= used_in;
    done += produced;
  }
  return done == out_size;
}

}  // namespace

std::unique_ptr<char[]> InflateCompressedSection(Elf* elf, Elf_Scn* scn, size_t padding) {
  GElf_Ehdr ehdr;
  GElf_Shdr shdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return nullptr;
  // What elf_compress refuses, and what libelf converts (another byte order) stays its own.
  if ((shdr.sh_flags & SHF_COMPRESSED) == 0 || (shdr.sh_flags & SHF_ALLOC) != 0) return nullptr;
  if (shdr.sh_type == SHT_NULL || shdr.sh_type == SHT_NOBITS || ehdr.e_ident[EI_DATA] != kNativeData) return nullptr;
  GElf_Chdr chdr;
  if (gelf_getchdr(scn, &chdr) == nullptr || chdr.ch_type != ELFCOMPRESS_ZLIB) return nullptr;
  if ((chdr.ch_addralign & (chdr.ch_addralign - 1)) != 0) return nullptr;
  Elf_Data* data = elf_getdata(scn, nullptr);
  const size_t header = gelf_fsize(elf, ELF_T_CHDR, 1, EV_CURRENT);
  if (data == nullptr || data->d_buf == nullptr || header == 0 || data->d_size < header) return nullptr;
  const size_t in_size = data->d_size - header;
  const uint64_t out_size = chdr.ch_size;
  if (out_size / kMaxRatio > in_size || out_size > SIZE_MAX - padding) return nullptr;

  std::unique_ptr<char[]> out(new (std::nothrow) char[out_size + padding]);
  if (out == nullptr) return nullptr;
  if (!InflateZlib(static_cast<const unsigned char*>(data->d_buf) + header, in_size, out.get(), out_size)) {
    return nullptr;
  }
  std::memset(out.get() + out_size, 0, padding);
  // What elf_compress(scn, 0, 0) leaves: the header says the section is stored uncompressed,
  // its data is the inflated bytes.
  shdr.sh_flags &= ~static_cast<GElf_Xword>(SHF_COMPRESSED);
  shdr.sh_size = out_size;
  shdr.sh_addralign = chdr.ch_addralign;
  if (gelf_update_shdr(scn, &shdr) == 0) return nullptr;  // never for a header gelf_getshdr read
  data->d_buf = out.get();
  data->d_size = out_size;
  data->d_type = ELF_T_BYTE;
  data->d_align = chdr.ch_addralign;
  data->d_off = 0;
  return out;
}

}  // namespace jitdump::symbols
