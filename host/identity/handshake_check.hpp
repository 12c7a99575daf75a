// The Handshake's name check: the profiles and native plugin names the
// shim registered must match what the host resolved from the same
// KubeSchedulerConfiguration. Worded like `schedplug check`.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/plugin/created_plugins.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

struct HandshakeFindings {
  std::vector<std::string> errors;    // any: refuse the session
  std::vector<std::string> warnings;  // returned to the shim, logged
};

HandshakeFindings check_handshake(
    const v1::HandshakeRequest& request, const CreatedPlugins& created,
    const std::vector<std::shared_ptr<PluginLibrary>>& libraries,
    const std::filesystem::path& config_file);

}  // namespace schedplug::host
