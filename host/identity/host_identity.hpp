// Which host process, with which plugin builds and configuration, computes
// the answers (schedplug.v1.HostIdentity). The shim keeps some answers
// beyond their cycle and uses them only while the identity that computed
// them is the one its session still sees.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

struct HostIdentity {
  // Random per process (never 0): a restarted host has another.
  uint64_t epoch = 0;
  // The first 8 bytes, big-endian, of the SHA-256 of the configuration
  // file's bytes and of every plugin's file digest in `libraries` order.
  uint64_t build = 0;

  void to_proto(v1::HostIdentity& out) const {
    out.set_epoch(epoch);
    out.set_build(build);
  }
};

// The bytes of `file` ("" when it cannot be read).
std::string config_file_bytes(const std::filesystem::path& file);

// A new random epoch (never 0).
uint64_t new_host_epoch();

// HostIdentity.build of a configuration file's bytes and `libraries`.
uint64_t host_build(
    std::string_view config_bytes,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries);

// A new epoch and the build of `config_file` (unreadable: as if empty)
// with `libraries`.
HostIdentity make_host_identity(
    const std::filesystem::path& config_file,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries);

}  // namespace schedplug::host
