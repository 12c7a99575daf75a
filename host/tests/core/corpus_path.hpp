// Where CMake built the plugin corpus (corpus/*.c, *.cpp).
#pragma once

#include <filesystem>
#include <string>

namespace schedplug::host::testing {

inline std::filesystem::path corpus_dir() { return SCHEDPLUG_CORPUS_DIR; }
inline std::filesystem::path corpus_file(const std::string& stem) {
  return corpus_dir() / (stem + ".so");
}

}  // namespace schedplug::host::testing
