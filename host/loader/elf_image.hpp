// Whether a plugin file holds every byte its ELF headers say it has.
//
// dlopen maps a shared object's segments straight from the file; a file
// shorter than its program headers say (one still being copied, or cut
// short by a full disk) is mapped past its end, and the first touch of
// those pages kills the whole process with SIGBUS. So the host reads the
// headers first and refuses an incomplete file with a sentence.
#pragma once

#include <string>

namespace schedplug::host {

// "" when `fd` (a file of `size` bytes) is not an ELF file of this
// machine's class (dlopen then explains what it is), or holds every
// segment and the section header table its headers describe; else why
// not, as a sentence for after "<file>: ".
std::string elf_image_problem(int fd, unsigned long long size);

}  // namespace schedplug::host
