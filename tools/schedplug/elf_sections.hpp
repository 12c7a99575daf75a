// What a shared object still carries that a deployed plugin does not need:
// its symbol table and debug sections (what `strip --strip-unneeded`
// removes), read from the ELF section headers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace schedplug::tools {

// The names of the sections of `file` that stripping would remove
// (".symtab", ".strtab" and every ".debug*" or ".zdebug*"), in file order;
// empty for a stripped file. Throws std::runtime_error naming the file when
// it is not a readable 64-bit ELF file.
std::vector<std::string> unstripped_sections(const std::filesystem::path& file);

}  // namespace schedplug::tools
