// One ELF file, open for its symbols, notes and line tables through libelf (elfutils, Debian
// libelf-dev) in pread mode (ELF_C_READ): only the headers and the sections asked for are read,
// each into a buffer of its own size, and the file is never mapped whole. Bytes already in
// memory (this process's vdso, a MiniDebugInfo image) open the same way.
//
// Everything here is read from input nobody vouches for: every count, offset and size is checked
// against the file's size by libelf or here, and a damaged file gives nullptr, never a crash.
#pragma once

#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitdump::symbols {

// libelf's version handshake, once per process (thread-safe).
void InitLibelf();

class ElfImage {
 public:
  // Takes `fd` (closed here, also on failure). nullptr when it is no regular file or no ELF
  // libelf can read; `error` says why.
  static std::unique_ptr<ElfImage> OpenFd(int fd, std::string* error);
  static std::unique_ptr<ElfImage> OpenPath(const std::string& path, std::string* error);
  // An image in memory (kept alive by the ElfImage).
  static std::unique_ptr<ElfImage> OpenBytes(std::vector<uint8_t> bytes, std::string* error);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  Elf* elf() const { return elf_; }
  int fd() const { return fd_; }  // -1 for an image in memory
  const GElf_Ehdr& header() const { return ehdr_; }
  uint64_t size() const { return size_; }  // of the file or the bytes
  // The GNU build id note (.note.gnu.build-id or a PT_NOTE); empty when there is none.
  std::span<const uint8_t> build_id() const { return build_id_; }

  struct Load {
    uint64_t vaddr = 0;
    uint64_t offset = 0;
    uint64_t filesz = 0;
    uint64_t memsz = 0;
    uint32_t flags = 0;
  };
  const std::vector<Load>& loads() const { return loads_; }
  // perf's elf_read_program_header: the PT_LOAD whose [p_vaddr, p_vaddr + max(memsz, filesz))
  // holds `vaddr`.
  const Load* LoadAtVaddr(uint64_t vaddr) const;
  // The address a file offset is loaded at: through the PT_LOAD whose file bytes hold it
  // (executable segments first: text and read-only data of old layouts share pages).
  std::optional<uint64_t> VaddrOfOffset(uint64_t offset) const;

  // The first section called `name`, with its header and index; nullptr when there is none.
  Elf_Scn* FindSection(std::string_view name, GElf_Shdr* shdr, size_t* index = nullptr) const;
  // A section's name, "" when the string table does not hold it.
  std::string_view SectionName(const GElf_Shdr& shdr) const;
  // The section's bytes as libelf reads them (pread into a buffer libelf owns); nullptr when
  // the section is NOBITS, lies outside the file or is larger than `limit`.
  Elf_Data* SectionData(Elf_Scn* scn, uint64_t limit) const;

  // Why the file is cut short or damaged (its section headers or segments lie past its end),
  // "" when it looks whole.
  std::string Damage() const;

  bool HasSymtab() const;  // a .symtab of type SYMTAB
  bool HasDwarf() const;   // a .debug_info with bytes (not NOBITS, as in a stripped file)
  // The .gnu_debuglink file name; empty when there is none.
  std::string debuglink() const;

 private:
  ElfImage() = default;
  bool Init(std::string* error);

  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::vector<uint8_t> bytes_;
  uint64_t size_ = 0;
  GElf_Ehdr ehdr_{};
  size_t shstrndx_ = 0;
  bool have_shstrndx_ = false;
  std::vector<uint8_t> build_id_;
  std::vector<Load> loads_;
};

// "93ac61..." for bytes {0x93, 0xac, 0x61, ...}.
std::string HexString(std::span<const uint8_t> bytes);

}  // namespace jitdump::symbols
