#include "jitdump/symbols/elf_image.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace jitdump::symbols {
namespace {

// A build id longer than this is no GNU build id (SHA-1 gives 20 bytes, perf keeps at most 20).
constexpr size_t kMaxBuildId = 64;

}  // namespace

void InitLibelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string HexString(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    text += kDigits[b >> 4];
    text += kDigits[b & 15];
  }
  return text;
}

std::unique_ptr<ElfImage> ElfImage::OpenFd(int fd, std::string* error) {
  std::unique_ptr<ElfImage> image(new ElfImage());
  image->fd_ = fd;
  if (fd < 0) {
    *error = "no file";
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    // A FIFO or a device would block or never end: only regular files are read.
    *error = "not a regular file";
    return nullptr;
  }
  image->size_ = static_cast<uint64_t>(st.st_size);
  InitLibelf();
  image->elf_ = elf_begin(fd, ELF_C_READ, nullptr);
  if (!image->Init(error)) return nullptr;
  return image;
}

std::unique_ptr<ElfImage> ElfImage::OpenPath(const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    *error = std::strerror(errno);
    return nullptr;
  }
  return OpenFd(fd, error);
}

std::unique_ptr<ElfImage> ElfImage::OpenBytes(std::vector<uint8_t> bytes, std::string* error) {
  std::unique_ptr<ElfImage> image(new ElfImage());
  image->bytes_ = std::move(bytes);
  image->size_ = image->bytes_.size();
  InitLibelf();
  if (image->bytes_.empty()) {
    *error = "empty";
    return nullptr;
  }
  image->elf_ = elf_memory(reinterpret_cast<char*>(image->bytes_.data()), image->bytes_.size());
  if (!image->Init(error)) return nullptr;
  return image;
}

ElfImage::~ElfImage() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
}

bool ElfImage::Init(std::string* error) {
  if (elf_ == nullptr) {
    *error = elf_errmsg(-1);
    return false;
  }
  if (elf_kind(elf_) != ELF_K_ELF) {
    *error = "not an ELF file";
    return false;
  }
  if (gelf_getehdr(elf_, &ehdr_) == nullptr) {
    *error = std::string("bad ELF header: ") + elf_errmsg(-1);
    return false;
  }
  have_shstrndx_ = elf_getshdrstrndx(elf_, &shstrndx_) == 0;

  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf_, static_cast<int>(i), &phdr) == nullptr) break;
      if (phdr.p_type != PT_LOAD) continue;
      loads_.push_back(Load{phdr.p_vaddr, phdr.p_offset, phdr.p_filesz, phdr.p_memsz, phdr.p_flags});
    }
  }

  const void* id = nullptr;
  const ssize_t id_size = dwelf_elf_gnu_build_id(elf_, &id);
  if (id_size > 0 && static_cast<size_t>(id_size) <= kMaxBuildId && id != nullptr) {
    const auto* p = static_cast<const uint8_t*>(id);
    build_id_.assign(p, p + id_size);
  }
  return true;
}

const ElfImage::Load* ElfImage::LoadAtVaddr(uint64_t vaddr) const {
  for (const Load& load : loads_) {
    const uint64_t size = std::max(load.memsz, load.filesz);
    if (size == 0) continue;
    if (vaddr >= load.vaddr && vaddr - load.vaddr < size) return &load;
  }
  return nullptr;
}

std::optional<uint64_t> ElfImage::VaddrOfOffset(uint64_t offset) const {
  const Load* found = nullptr;
  for (const Load& load : loads_) {
    if (offset < load.offset || offset - load.offset >= load.filesz) continue;
    if (found == nullptr || ((load.flags & PF_X) != 0 && (found->flags & PF_X) == 0)) found = &load;
  }
  if (found == nullptr) return std::nullopt;
  return offset - found->offset + found->vaddr;
}

Elf_Scn* ElfImage::FindSection(std::string_view name, GElf_Shdr* shdr, size_t* index) const {
  if (!have_shstrndx_) return nullptr;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    if (SectionName(header) != name) continue;
    *shdr = header;
    if (index != nullptr) *index = elf_ndxscn(scn);
    return scn;
  }
  return nullptr;
}

std::string_view ElfImage::SectionName(const GElf_Shdr& shdr) const {
  if (!have_shstrndx_) return {};
  const char* name = elf_strptr(elf_, shstrndx_, shdr.sh_name);
  return name != nullptr ? std::string_view(name) : std::string_view();
}

Elf_Data* ElfImage::SectionData(Elf_Scn* scn, uint64_t limit) const {
  GElf_Shdr shdr;
  if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return nullptr;
  if (shdr.sh_type == SHT_NOBITS || shdr.sh_size > limit) return nullptr;
  if (shdr.sh_offset > size_ || size_ - shdr.sh_offset < shdr.sh_size) return nullptr;
  return elf_getdata(scn, nullptr);
}

std::string ElfImage::Damage() const {
  size_t count = 0;
  if (elf_getshdrnum(elf_, &count) != 0) return std::string("unreadable section headers: ") + elf_errmsg(-1);
  const uint64_t entry = ehdr_.e_shentsize;
  if (count > 0 && (ehdr_.e_shoff > size_ || entry == 0 || (size_ - ehdr_.e_shoff) / entry < count)) {
    return "section headers past the end of the file (" + std::to_string(size_) + " bytes): truncated?";
  }
  for (const Load& load : loads_) {
    if (load.offset > size_ || size_ - load.offset < load.filesz) {
      return "a segment past the end of the file (" + std::to_string(size_) + " bytes): truncated?";
    }
  }
  return {};
}

bool ElfImage::HasSymtab() const {
  GElf_Shdr shdr;
  return FindSection(".symtab", &shdr) != nullptr && shdr.sh_type == SHT_SYMTAB;
}

bool ElfImage::HasDwarf() const {
  GElf_Shdr shdr;
  return FindSection(".debug_info", &shdr) != nullptr && shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
}

std::string ElfImage::debuglink() const {
  GElf_Word crc = 0;
  const char* name = dwelf_elf_gnu_debuglink(elf_, &crc);
  if (name == nullptr) return {};
  // The name is NUL-terminated inside the section (dwelf checks); a path in it is refused.
  std::string_view view(name);
  if (view.empty() || view.find('/') != std::string_view::npos || view == "." || view == "..") return {};
  return std::string(view);
}

}  // namespace jitdump::symbols
