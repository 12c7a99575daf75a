#include "host/service/host_identity.hpp"

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "host/loader/plugin_file_check.hpp"

namespace schedplug::host {
namespace {

uint64_t new_epoch() {
  std::random_device random;
  uint64_t epoch = 0;
  while (epoch == 0) {
    epoch = (uint64_t{random()} << 32) ^ uint64_t { random() };
  }
  return epoch;
}

std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

HostIdentity make_host_identity(
    const std::filesystem::path& config_file,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries) {
  // Lengths first, so no two different inputs hash the same text.
  std::string input = file_bytes(config_file);
  input = std::to_string(input.size()) + ":" + input;
  for (const auto& library : libraries) {
    input += "\n" + library->name() + " " + library->sha256();
  }
  const std::string digest = bytes_sha256(input);
  return {.epoch = new_epoch(),
          .build = std::stoull(digest.substr(0, 16), nullptr, 16)};
}

}  // namespace schedplug::host
