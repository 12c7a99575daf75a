// Replays fuzz inputs without libFuzzer: the normal (GCC) build links each
// fuzz target with this main, and ctest runs it over the target's seed
// corpus and its regressions (fuzz/<target>/corpus, fuzz/<target>/regressions),
// so every input that once crashed stays a test in every build, including
// the sanitizer builds.
//
//   fuzz_<target>_replay FILE_OR_DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr,
                   "fuzz replay: %s is neither a file nor a directory; pass "
                   "the corpus directories of this fuzz target\n",
                   argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr,
                 "fuzz replay: no inputs found in the given directories; the "
                 "seed corpus must not be empty\n");
    return 2;
  }
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(),
                 bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
  }
  std::printf("fuzz replay: %zu inputs ran without a finding\n", files.size());
  return 0;
}
