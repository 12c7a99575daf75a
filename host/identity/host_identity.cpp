#include "host/identity/host_identity.hpp"

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

uint64_t new_host_epoch() { return new_epoch(); }

std::string config_file_bytes(const std::filesystem::path& file) {
  return file_bytes(file);
}

uint64_t host_build(
    std::string_view config_bytes,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries) {
  // Lengths first, so no two different inputs hash the same text.
  std::string input = std::to_string(config_bytes.size()) + ":";
  input += config_bytes;
  for (const auto& library : libraries) {
    input += "\n" + library->name() + " " + library->sha256();
  }
  const std::string digest = bytes_sha256(input);
  return std::stoull(digest.substr(0, 16), nullptr, 16);
}

HostIdentity make_host_identity(
    const std::filesystem::path& config_file,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries) {
  return {.epoch = new_epoch(),
          .build = host_build(file_bytes(config_file), libraries)};
}

}  // namespace schedplug::host
