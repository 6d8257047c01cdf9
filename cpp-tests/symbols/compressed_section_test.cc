// InflateCompressedSection (libdeflate) must leave a compressed debug section exactly as libelf's
// own elf_compress(scn, 0, 0) leaves it: the same bytes, size, alignment and flags, for every
// debug section of the fixture library with its debug sections compressed; and it must refuse
// what it does not handle (an uncompressed section, a damaged stream) without touching it, so
// that libelf's answer stands.
#include "jitdump/symbols/compressed_section.h"

#include <gelf.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "jitdump/symbols/elf_image.h"

namespace jitdump::symbols {
namespace {

const std::string kCompressed = std::string(SYMFIX_LAYOUTS) + "/compressed/usr/lib/libsymfix.so";

struct Section {
  std::string name;
  GElf_Shdr shdr{};
  std::string bytes;
};

// Every .debug_* section of `image` after `inflate` ran on it, as libelf then presents it.
template <typename Inflate>
std::vector<Section> DebugSections(const ElfImage& image, Inflate inflate) {
  std::vector<Section> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(image.elf(), scn)) != nullptr) {
    Section section;
    if (gelf_getshdr(scn, &section.shdr) == nullptr) continue;
    section.name = std::string(image.SectionName(section.shdr));
    if (!section.name.starts_with(".debug_")) continue;
    inflate(scn);
    gelf_getshdr(scn, &section.shdr);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data != nullptr && data->d_buf != nullptr) section.bytes.assign(static_cast<const char*>(data->d_buf), data->d_size);
    out.push_back(std::move(section));
  }
  return out;
}

TEST(CompressedSectionTest, InflatesAsLibelfDoes) {
  std::string error;
  std::unique_ptr<ElfImage> ours = ElfImage::OpenPath(kCompressed, &error);
  std::unique_ptr<ElfImage> libelfs = ElfImage::OpenPath(kCompressed, &error);
  ASSERT_TRUE(ours && libelfs) << error;
  std::vector<std::unique_ptr<char[]>> buffers;
  size_t compressed = 0;
  const std::vector<Section> mine = DebugSections(*ours, [&](Elf_Scn* scn) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    std::unique_ptr<char[]> buffer = InflateCompressedSection(ours->elf(), scn, 16);
    EXPECT_EQ(buffer != nullptr, (shdr.sh_flags & SHF_COMPRESSED) != 0);
    if (buffer == nullptr) return;
    ++compressed;
    // The padding is zeros (libdw's strlen stops there).
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(static_cast<const char*>(data->d_buf)[data->d_size + i], '\0');
    buffers.push_back(std::move(buffer));
  });
  const std::vector<Section> theirs = DebugSections(*libelfs, [](Elf_Scn* scn) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_flags & SHF_COMPRESSED) != 0) elf_compress(scn, 0, 0);
  });
  EXPECT_GE(compressed, 3u);  // .debug_info, .debug_abbrev, .debug_line at least
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    SCOPED_TRACE(mine[i].name);
    EXPECT_EQ(mine[i].name, theirs[i].name);
    EXPECT_EQ(mine[i].shdr.sh_flags, theirs[i].shdr.sh_flags);
    EXPECT_EQ(mine[i].shdr.sh_size, theirs[i].shdr.sh_size);
    EXPECT_EQ(mine[i].shdr.sh_addralign, theirs[i].shdr.sh_addralign);
    EXPECT_EQ(mine[i].bytes, theirs[i].bytes);
  }
}

TEST(CompressedSectionTest, LeavesADamagedStreamToLibelf) {
  std::ifstream in(kCompressed, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  std::unique_ptr<ElfImage> probe = ElfImage::OpenPath(kCompressed, &error);
  ASSERT_TRUE(probe) << error;
  GElf_Shdr info;
  Elf_Scn* scn = probe->FindSection(".debug_info", &info);
  ASSERT_NE(scn, nullptr);
  ASSERT_NE(info.sh_flags & SHF_COMPRESSED, 0u);
  // Past the compression header and the zlib header: the deflate stream's bytes.
  const size_t at = info.sh_offset + sizeof(Elf64_Chdr) + 2;
  for (size_t i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>(~bytes[at + i]);
  std::unique_ptr<ElfImage> damaged =
      ElfImage::OpenBytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), &error);
  ASSERT_TRUE(damaged) << error;
  GElf_Shdr shdr;
  scn = damaged->FindSection(".debug_info", &shdr);
  ASSERT_NE(scn, nullptr);
  EXPECT_EQ(InflateCompressedSection(damaged->elf(), scn, 16), nullptr);
  GElf_Shdr after;
  gelf_getshdr(scn, &after);
  EXPECT_NE(after.sh_flags & SHF_COMPRESSED, 0u);  // untouched
  EXPECT_EQ(after.sh_size, shdr.sh_size);
  EXPECT_LT(elf_compress(scn, 0, 0), 0);  // libelf refuses it too
}

TEST(CompressedSectionTest, RefusesAnUncompressedSection) {
  std::string error;
  std::unique_ptr<ElfImage> plain = ElfImage::OpenPath(SYMFIX_LIB, &error);
  ASSERT_TRUE(plain) << error;
  GElf_Shdr shdr;
  Elf_Scn* scn = plain->FindSection(".debug_info", &shdr);
  ASSERT_NE(scn, nullptr);
  EXPECT_EQ(InflateCompressedSection(plain->elf(), scn, 16), nullptr);
}

}  // namespace
}  // namespace jitdump::symbols
