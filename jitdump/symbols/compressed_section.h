// A compressed ELF section (SHF_COMPRESSED, zlib: what `gcc -gz` and Debian's libc6-dbg ship)
// inflated with libdeflate (Debian libdeflate-dev) into a buffer of ours, and handed to libelf
// as if it had been stored uncompressed.
//
// libelf's own elf_compress inflates through zlib's streaming inflate; libdeflate's whole-buffer
// inflate is two to three times faster, and opening libc6-dbg's DWARF is mostly inflating it.
// The result is what elf_compress(scn, 0, 0) leaves: the section's in-memory header loses
// SHF_COMPRESSED and gets the inflated size and alignment, and elf_getdata returns the inflated
// bytes (so dwarf_begin_elf reads them and inflates nothing). Nothing is written to the file.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstddef>
#include <memory>

namespace jitdump::symbols {

// Inflates `scn` of `elf` when it is a zlib-compressed section of a file in this machine's byte
// order; the bytes are followed by `padding` zero bytes (libdw reads strings with strlen). The
// buffer must outlive every use of the section's data (libelf does not free it). nullptr, with
// the section untouched, for anything else: no SHF_COMPRESSED, another compression, a damaged
// stream or header (elf_compress then gives libelf's own answer).
std::unique_ptr<char[]> InflateCompressedSection(Elf* elf, Elf_Scn* scn, size_t padding);

}  // namespace jitdump::symbols
