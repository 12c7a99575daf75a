// One pod's scheduling cycle as the native plugins see it: the pod, and
// for every plugin of the profile its PodScope (plugin.h's pod_begin: the
// per-pod state and the filter / score gates).
//
// PreFilter begins the cycle (pod_begin once per plugin), the session keeps
// it, and the same cycle's single-node Filter and PreScore calls hand each
// plugin's state to every filter / score call. Whoever holds the last
// reference ends it: destroying the cycle calls pod_end once per successful
// pod_begin. The session drops its reference when PreScore (the cycle's
// last call) is done, when the next PreFilter begins another cycle, and
// when the session is evicted or the host shuts down; a call still using
// the cycle keeps it alive until it returns.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/chain/chain_types.hpp"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

class PodCycle {
 public:
  // Calls begin_pod on every plugin of `plugins` (in order) for `pod`.
  // `key` identifies the cycle's pod and profile (see cycle_key()).
  // `owner` keeps the plugins alive until the cycle ended (the plugin set
  // they belong to, which a reload may replace meanwhile).
  PodCycle(std::string key, std::unique_ptr<const PodModel> pod,
           std::span<const PluginInstance* const> plugins,
           std::shared_ptr<const void> owner = {});
  // Ends every scope (pod_end), in reverse order of beginning.
  ~PodCycle();
  PodCycle(const PodCycle&) = delete;
  PodCycle& operator=(const PodCycle&) = delete;

  const std::string& key() const { return key_; }
  const PodModel& pod() const { return *pod_; }
  // The plugin's scope, or nullptr when the plugin is not in the cycle.
  const PodScope* scope_for(const PluginInstance* plugin) const;
  // One run per plugin with its begin_pod time (none kept for a plugin
  // without pod_begin or applies), for the host's metrics.
  const ChainRuns& begin_runs() const { return begin_runs_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::shared_ptr<const void> owner_;  // first: it outlives the scopes
  std::string key_;
  std::unique_ptr<const PodModel> pod_;
  std::vector<std::pair<const PluginInstance*, PodScope>> scopes_;
  ChainRuns begin_runs_;
};

// What ties the calls of one cycle together: the profile and the pod's
// namespace, name and uid (the same in a cycle's PreFilter, Filter and
// PreScore requests).
std::string cycle_key(const std::string& scheduler_name, const PodData& pod);
std::string cycle_key(std::string_view scheduler_name,
                      std::string_view namespace_name, std::string_view name,
                      std::string_view uid);

}  // namespace schedplug::host
