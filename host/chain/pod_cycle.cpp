#include "host/chain/pod_cycle.hpp"

#include <chrono>

namespace schedplug::host {

PodCycle::PodCycle(std::string key, std::unique_ptr<const PodModel> pod,
                   std::span<const PluginInstance* const> plugins,
                   std::shared_ptr<const void> owner)
    : owner_(std::move(owner)), key_(std::move(key)), pod_(std::move(pod)) {
  scopes_.reserve(plugins.size());
  begin_runs_.resize(plugins.size());
  for (size_t i = 0; i < plugins.size(); ++i) {
    const PluginInstance* plugin = plugins[i];
    const auto start = std::chrono::steady_clock::now();
    scopes_.emplace_back(plugin, plugin->begin_pod(pod_->view()));
    PluginRun& run = begin_runs_[i];
    run.plugin = plugin;
    run.duration = std::chrono::steady_clock::now() - start;
    if (plugin->library().has_gate())
      run.hooks.add(TimedHook::kBeginPod, run.duration);
  }
}

PodCycle::~PodCycle() {
  while (!scopes_.empty()) scopes_.pop_back();
}

const PodScope* PodCycle::scope_for(const PluginInstance* plugin) const {
  for (const auto& [p, scope] : scopes_) {
    if (p == plugin) return &scope;
  }
  return nullptr;
}

std::string cycle_key(const std::string& scheduler_name, const PodData& pod) {
  return cycle_key(scheduler_name, pod.namespace_name, pod.name, pod.uid);
}

std::string cycle_key(std::string_view scheduler_name,
                      std::string_view namespace_name, std::string_view name,
                      std::string_view uid) {
  std::string key(scheduler_name);
  for (std::string_view part : {namespace_name, name, uid}) {
    key += '\0';
    key += part;
  }
  return key;
}

}  // namespace schedplug::host
