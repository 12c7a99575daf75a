// The Handshake's config-skew check: the weights, failure policies and
// args kube-scheduler read for each native plugin (sent by the shim in
// ProfilePlugins.settings) must equal the host's reading of the same
// KubeSchedulerConfiguration. A host sidecar that restarted and re-read an
// updated ConfigMap while kube-scheduler kept the old one is refused here
// instead of silently running different settings.
//
// Args are compared as JSON values, not as text: the two YAML readers
// differ in how they spell numbers (`1` and `1.0`, numbers too large for
// 64 bits), so numbers compare as doubles and key order does not matter.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/config/resolve.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

struct SkewFindings {
  // One sentence per difference, naming the profile, the plugin and the
  // field: any means refuse the session.
  std::vector<std::string> errors;
  // Profiles for which the shim sent no settings (an older shim): not
  // compared.
  std::vector<std::string> unchecked_profiles;
};

SkewFindings check_config_skew(const v1::HandshakeRequest& request,
                               const std::vector<ResolvedProfile>& profiles,
                               const std::filesystem::path& config_file);

// Every difference between two JSON values under `path` (e.g. "args"), as
// "<path> is <a> in kube-scheduler and <b> in the host's config" without a
// trailing period; numbers compare as doubles, object keys in any order.
// At most `limit` differences are listed.
std::vector<std::string> json_differences(const nlohmann::json& scheduler,
                                          const nlohmann::json& host,
                                          const std::string& path,
                                          size_t limit = 10);

}  // namespace schedplug::host
