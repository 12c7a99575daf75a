#include "tools/schedplug/elf_sections.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace schedplug::tools {
namespace {

[[noreturn]] void not_elf(const std::filesystem::path& file,
                          const std::string& why) {
  throw std::runtime_error(file.string() +
                           ": not a 64-bit ELF shared object (" + why + ")");
}

template <typename T>
T read_at(std::ifstream& in, const std::filesystem::path& file, uint64_t at) {
  T value{};
  in.seekg(static_cast<std::streamoff>(at));
  if (!in.read(reinterpret_cast<char*>(&value), sizeof value)) {
    not_elf(file, "truncated at byte " + std::to_string(at));
  }
  return value;
}

bool removed_by_strip(const std::string& name) {
  return name == ".symtab" || name == ".strtab" || name.starts_with(".debug") ||
         name.starts_with(".zdebug");
}

}  // namespace

std::vector<std::string> unstripped_sections(
    const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) not_elf(file, "cannot open it");
  const auto header = read_at<Elf64_Ehdr>(in, file, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    not_elf(file, "no ELF magic");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64) not_elf(file, "not ELFCLASS64");
  if (header.e_shentsize != sizeof(Elf64_Shdr)) {
    not_elf(file, "unexpected section header size");
  }
  if (header.e_shstrndx >= header.e_shnum) return {};
  const auto names = read_at<Elf64_Shdr>(
      in, file,
      header.e_shoff + uint64_t{header.e_shstrndx} * sizeof(Elf64_Shdr));
  std::string strtab(names.sh_size, '\0');
  in.seekg(static_cast<std::streamoff>(names.sh_offset));
  if (!in.read(strtab.data(), static_cast<std::streamsize>(strtab.size()))) {
    not_elf(file, "truncated section name table");
  }
  std::vector<std::string> found;
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    const auto section = read_at<Elf64_Shdr>(
        in, file, header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr));
    if (section.sh_name >= strtab.size()) continue;
    const std::string name(strtab.c_str() + section.sh_name);
    if (removed_by_strip(name)) found.push_back(name);
  }
  return found;
}

}  // namespace schedplug::tools
