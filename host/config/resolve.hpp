// Which native plugins each profile runs, in which order, with which args.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_library.hpp"

namespace schedplug::host {

// The host's own per-plugin settings, read from the `schedplug` key of the
// plugin's pluginConfig args (and stripped before the args reach the .so).
// The shim reads the same key; see docs/shim.md ("Configuration: the
// `schedplug` args key").
struct HostSettings {
  std::string failure_policy = "Fail";  // "Fail" or "Ignore"
  int timeout_ms = 0;                   // 0: the shim's default
  // A candidate build of the plugin to run in shadow beside it (a file
  // inside the plugin directory, relative to it: shadow_path_problem);
  // "" for none. host/shadow/.
  std::string shadow;
  // simulatorAnnotations: the profile writes kube-scheduler-simulator's
  // result annotations (the shim does; the host only checks the value).
  std::optional<bool> simulator_annotations;
  // `sha256` (a pin, see config_plugin_pins) is read before loading and
  // not kept here.
};

struct ResolvedPlugin {
  std::shared_ptr<PluginLibrary> library;
  // The loaded settings.shadow file (load_shadow_candidates); null: none.
  std::shared_ptr<PluginLibrary> shadow;
  std::string args_json;  // without the `schedplug` key
  HostSettings settings;
  int weight = 1;  // score weight (kube-scheduler applies it; informational)
  // The weight kube-scheduler gives the plugin (upstream's
  // getScoreWeights): its entry in the score list, else in multiPoint's,
  // 0 or none meaning 1; 0 when neither list enables it. Compared with the
  // shim's in the Handshake's config-skew check.
  int config_weight = 0;
};

struct ResolvedProfile {
  std::string scheduler_name;
  // Native Filter plugins in the order kube-scheduler runs them.
  std::vector<ResolvedPlugin> filters;
  // Native Score plugins in the order kube-scheduler runs them.
  std::vector<ResolvedPlugin> scorers;
  // Every native plugin the profile enables anywhere, once each, in first
  // appearance order (one instance is created per entry).
  std::vector<ResolvedPlugin> plugins;
};

// Resolves every profile the way kube-scheduler expands multiPoint and the
// per-extension-point enabled/disabled lists. Names that are neither
// in-tree nor loaded are left out (check_names reports them). Throws
// ConfigError listing every plugin whose args are not valid (e.g. a bad
// `schedplug` key).
std::vector<ResolvedProfile> resolve_profiles(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins);
// The same, but appends those problems to `problems` and resolves anyway
// (a bad setting keeps its default), so `schedplug check` can go on.
std::vector<ResolvedProfile> resolve_profiles(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins,
    std::vector<std::string>& problems);

// The plugins the configuration pins by SHA-256: `schedplug.sha256` in
// their pluginConfig args, plugin name -> lowercase hex digest. Read before
// any plugin is loaded (host/loader/plugin_file_check.hpp). A pin that is
// not 64 hex digits, or two profiles pinning one plugin differently, is
// appended to `problems` and left out.
std::map<std::string, std::string> config_plugin_pins(
    const SchedulerConfig& config, std::vector<std::string>& problems);

// Why `shadow` (args.schedplug.shadow) cannot name a candidate file: it is
// absolute or has a ".." component, so it could name a file outside the
// plugin directory. A sentence beginning "args.schedplug.shadow is", or ""
// when the path is fine.
std::string shadow_path_problem(const std::string& shadow);

// The native plugins (loaded, not in-tree, implementing the point) that
// kube-scheduler runs at `point` of `profile`, in its order, with
// multiPoint expanded as resolve_profiles does. `point` is one of
// preFilter, filter, preScore, score.
std::vector<std::string> native_plugins_at(
    const Profile& profile, ExtensionPoint point,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins);

}  // namespace schedplug::host
