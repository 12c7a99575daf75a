#include "host/loader/elf_image.hpp"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace schedplug::host {
namespace {

// The ELF types of this machine's class (ElfW is glibc's).
using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
constexpr unsigned char kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

bool read_at(int fd, void* out, size_t n, unsigned long long offset) {
  auto* at = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::pread(fd, at, n, static_cast<off_t>(offset));
    if (got <= 0) return false;
    at += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<unsigned long long>(got);
  }
  return true;
}

// Where a table or segment ends, or 0 when the sum overflows.
unsigned long long end_of(unsigned long long offset, unsigned long long count,
                          unsigned long long each) {
  if (each != 0 && count > ~0ULL / each) return 0;
  const unsigned long long bytes = count * each;
  return offset > ~0ULL - bytes ? 0 : offset + bytes;
}

std::string incomplete(unsigned long long size, unsigned long long wanted,
                       const std::string& what) {
  return "the file is incomplete: it holds " + std::to_string(size) +
         " bytes, but its ELF headers place " + what + " up to byte " +
         std::to_string(wanted) +
         " (is it still being copied, or was the disk full?); the host "
         "loads it once it is whole, so copy plugin files elsewhere and "
         "rename them into the directory";
}

}  // namespace

std::string elf_image_problem(int fd, unsigned long long size) {
  Ehdr header{};
  if (size < EI_NIDENT || !read_at(fd, header.e_ident, EI_NIDENT, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != kClass) {
    return {};  // not ELF, or not this class: dlopen says which
  }
  if (size < sizeof header) {
    return incomplete(size, sizeof header, "the ELF header");
  }
  if (!read_at(fd, &header, sizeof header, 0)) {
    return "cannot read its ELF header; check the file";
  }
  if (header.e_phnum > 0 && header.e_phentsize != sizeof(Phdr)) {
    return "its ELF header gives program headers of " +
           std::to_string(header.e_phentsize) + " bytes, not " +
           std::to_string(sizeof(Phdr)) +
           "; it is damaged or not built for this machine, so rebuild it";
  }
  const auto headers_end = end_of(header.e_phoff, header.e_phnum, sizeof(Phdr));
  if (headers_end == 0 || headers_end > size) {
    return incomplete(size, headers_end, "its program headers");
  }
  std::vector<Phdr> segments(header.e_phnum);
  if (!segments.empty() &&
      !read_at(fd, segments.data(), segments.size() * sizeof(Phdr),
               header.e_phoff)) {
    return "cannot read its program headers; check the file";
  }
  for (const Phdr& segment : segments) {
    if (segment.p_filesz == 0) continue;
    const auto segment_end = end_of(segment.p_offset, 1, segment.p_filesz);
    if (segment_end == 0 || segment_end > size) {
      return incomplete(size, segment_end, "a segment");
    }
  }
  // Section headers sit at the end of the file as linkers write it: a cut
  // after the last segment shows here.
  if (header.e_shoff != 0 && header.e_shnum > 0) {
    const auto sections_end =
        end_of(header.e_shoff, header.e_shnum, header.e_shentsize);
    if (sections_end == 0 || sections_end > size) {
      return incomplete(size, sections_end, "its section headers");
    }
  }
  return {};
}

}  // namespace schedplug::host
