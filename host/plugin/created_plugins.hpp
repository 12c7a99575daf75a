// CreatedPlugins: the plugin instances created for every profile, and the
// per-profile Filter and Score lists the chain runs. Built at start-up and
// at each plugin reload (host/reload/); read-only afterwards, so requests
// share it without locks. A reload's set shares the instances whose
// library and args did not change with the set before it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "host/config/resolve.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

struct ProfilePlugins {
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
  // The same for every plugin of `plugins` (the v1.6 hooks' calls).
  std::vector<int> plugin_timeout_ms;
  // The shadow candidate of each filter / scorer (host/shadow/), parallel
  // to `filters` / `scorers`; nullptr where none is configured. Never in
  // `plugins`: a candidate takes no part in the cycle.
  std::vector<const PluginInstance*> filter_shadows;
  std::vector<const PluginInstance*> scorer_shadows;

  const PluginInstance* filter_named(std::string_view name) const;
  const PluginInstance* plugin_named(std::string_view name) const;
};

class CreatedPlugins {
 public:
  // One created instance, and what it was created from.
  struct Created {
    std::string profile;
    std::string args_json;
    std::shared_ptr<PluginInstance> instance;
    bool taken_over = false;  // from `previous`, not created by create()
    bool shadow = false;      // a shadow candidate's instance
  };
  // Creates one instance per (profile, plugin); with `previous`, takes
  // over its instance of a (profile, plugin) whose library object and args
  // are the same instead of creating one. Throws CreateError with the
  // profile named.
  static std::unique_ptr<CreatedPlugins> create(
      const std::vector<ResolvedProfile>& profiles,
      const CreatedPlugins* previous = nullptr);

  // A set of `instances` alone, without profiles: the `previous` of
  // create() for instances made elsewhere (the start-up check's,
  // host/check/startup_check.hpp), so they are taken over instead of
  // created a second time.
  static std::unique_ptr<CreatedPlugins> adopt(std::vector<Created> instances);

  const std::vector<ProfilePlugins>& profiles() const { return profiles_; }
  const ProfilePlugins* profile(std::string_view scheduler_name) const;

  const std::vector<Created>& instances() const { return instances_; }

 private:
  CreatedPlugins() = default;
  std::vector<Created> instances_;
  std::vector<ProfilePlugins> profiles_;
};

}  // namespace schedplug::host
