#include "host/chain/pod_cycle.hpp"

namespace schedplug::host {

PodCycle::PodCycle(std::string key, std::unique_ptr<const PodRecord> pod,
                   std::span<const PluginInstance* const> plugins)
    : key_(std::move(key)), pod_(std::move(pod)) {
  scopes_.reserve(plugins.size());
  for (const PluginInstance* plugin : plugins) {
    scopes_.emplace_back(plugin, plugin->begin_pod(pod_->view()));
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
  std::string key = scheduler_name;
  for (const std::string* part : {&pod.namespace_name, &pod.name, &pod.uid}) {
    key += '\0';
    key += *part;
  }
  return key;
}

}  // namespace schedplug::host
