// The created plugin instances of every profile, and the per-profile
// Filter and Score lists the chain runs. Built once at start-up; read-only
// afterwards, so requests share it without locks.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/config/resolve.hpp"
#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {

struct ProfileRuntime {
  std::string scheduler_name;
  // In the order kube-scheduler runs them.
  std::vector<const PluginInstance*> filters;
  std::vector<const PluginInstance*> scorers;
  // Every native plugin the profile enables, in first-appearance order.
  std::vector<PluginInstance*> plugins;
  // The `schedplug.timeout` of each filter / scorer in milliseconds (0:
  // none set), parallel to `filters` / `scorers`: the host stops a plugin
  // that runs longer than its own timeout, so a slow plugin cannot use up
  // the time of the plugins after it.
  std::vector<int> filter_timeout_ms;
  std::vector<int> scorer_timeout_ms;

  const PluginInstance* filter_named(std::string_view name) const;
  const PluginInstance* plugin_named(std::string_view name) const;
};

class PluginRuntime {
 public:
  // Creates one instance per (profile, plugin). Throws CreateError with
  // the profile named.
  static std::unique_ptr<PluginRuntime> create(
      const std::vector<ResolvedProfile>& profiles);

  const std::vector<ProfileRuntime>& profiles() const { return profiles_; }
  const ProfileRuntime* profile(std::string_view scheduler_name) const;

 private:
  PluginRuntime() = default;
  std::vector<std::unique_ptr<PluginInstance>> instances_;
  std::vector<ProfileRuntime> profiles_;
};

}  // namespace schedplug::host
