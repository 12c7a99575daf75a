#include "host/reload/plugin_generation.hpp"

#include <chrono>
#include <set>

#include <spdlog/spdlog.h>

#include "host/identity/host_identity.hpp"
#include "host/refresh/refresh_scheduler.hpp"

namespace schedplug::host {

// One instance's background refresh. A refresh still running when it is
// stopped holds its thread in plugin code, so the instance (and with it
// the library) is then kept for the rest of the process rather than
// destroyed under that thread.
class InstanceRefresh {
 public:
  InstanceRefresh(std::shared_ptr<PluginInstance> instance,
                  const std::string& profile, HostMetrics* metrics)
      : instance_(std::move(instance)),
        refresh_(std::make_unique<RefreshScheduler>(
            std::vector<RefreshTarget>{{instance_.get(), profile}}, metrics)) {}
  ~InstanceRefresh() { stop(); }
  InstanceRefresh(const InstanceRefresh&) = delete;
  InstanceRefresh& operator=(const InstanceRefresh&) = delete;

  void stop() {
    std::lock_guard lock(mutex_);
    if (refresh_ == nullptr) return;
    if (!refresh_->stop(std::chrono::milliseconds(5000)).empty()) {
      (void)refresh_.release();
      new std::shared_ptr<PluginInstance>(instance_);
      return;
    }
    refresh_.reset();
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<PluginInstance> instance_;
  std::unique_ptr<RefreshScheduler> refresh_;
};

PluginGeneration::~PluginGeneration() {
  // Refresh threads first: they call into the instances.
  refreshes.clear();
}

void PluginGeneration::stop_refresh() const {
  for (const auto& [_, refresh] : refreshes) refresh->stop();
}

std::shared_ptr<PluginGeneration> make_generation(
    GenerationParts parts, const PluginGeneration* previous) {
  auto set = std::make_shared<PluginGeneration>();
  set->created = CreatedPlugins::create(
      parts.resolved,
      previous != nullptr ? previous->created.get() : parts.checked.get());
  set->generation = previous != nullptr ? previous->generation + 1 : 1;
  set->build = host_build(parts.config_bytes, parts.libraries);
  for (const ResolvedProfile& profile : parts.resolved) {
    std::vector<int>& weights = set->score_weights[profile.scheduler_name];
    for (const ResolvedPlugin& scorer : profile.scorers)
      weights.push_back(scorer.weight);
  }
  set->config_bytes = std::move(parts.config_bytes);
  set->libraries = std::move(parts.libraries);
  set->resolved = std::move(parts.resolved);
  set->warnings = std::move(parts.warnings);
  return set;
}

void start_refresh(PluginGeneration& set, const PluginGeneration* previous,
                   HostMetrics* metrics) {
  for (const CreatedPlugins::Created& c : set.created->instances()) {
    if (!c.instance->library().has_refresh()) continue;
    const PluginInstance* key = c.instance.get();
    if (c.taken_over && previous != nullptr) {
      if (auto it = previous->refreshes.find(key);
          it != previous->refreshes.end()) {
        set.refreshes.emplace(key, it->second);
        continue;
      }
    }
    set.refreshes.emplace(
        key, std::make_shared<InstanceRefresh>(c.instance, c.profile, metrics));
  }
}

std::vector<v1::PluginInfo> plugin_infos(const PluginGeneration& set) {
  std::vector<v1::PluginInfo> infos;
  infos.reserve(set.libraries.size());
  for (const auto& lib : set.libraries) {
    v1::PluginInfo& info = infos.emplace_back();
    info.set_name(lib->name());
    info.set_version(lib->version());
    info.set_file(lib->file().string());
    info.set_sha256(lib->sha256());
    info.set_has_filter(lib->has_filter());
    info.set_has_score(lib->has_score());
    info.set_has_normalize_score(lib->has_normalize_score());
    info.set_has_reserve(lib->has_reserve());
    info.set_has_permit(lib->has_permit());
    info.set_has_pre_bind(lib->has_pre_bind());
    info.set_has_pre_enqueue(lib->has_pre_enqueue());
    // One pass over the plugin's instances (create() may set each of these
    // from its args):
    //  - events: the union, 0 (every event) when any instance asks for
    //    every event; no instance (enabled nowhere): the descriptor's;
    //  - data, the pod and node data they read (plugin.h v1.2): the union;
    //  - hints are promises (plugin.h v1.3): only what every instance
    //    promised;
    //  - the keys of SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (plugin.h
    //    v1.4): the union, sorted.
    uint64_t events = 0, data = 0, hints = ~uint64_t{0};
    bool every_event = false, enabled = false;
    std::set<std::string> label_keys, annotation_keys;
    for (const auto& profile : set.created->profiles()) {
      for (const PluginInstance* p : profile.plugins) {
        if (&p->library() != lib.get()) continue;
        const schedplug_settings& settings = p->settings();
        enabled = true;
        every_event = every_event || settings.events == 0;
        events |= settings.events;
        data |= settings.data;
        hints &= settings.hints;
        label_keys.insert(p->pod_keys().labels().begin(),
                          p->pod_keys().labels().end());
        annotation_keys.insert(p->pod_keys().annotations().begin(),
                               p->pod_keys().annotations().end());
      }
    }
    info.set_events(!enabled      ? lib->descriptor().events
                    : every_event ? 0
                                  : events);
    info.set_data(data);
    info.set_hints(enabled ? hints : 0);
    for (const std::string& k : label_keys) info.add_pod_label_keys(k);
    for (const std::string& k : annotation_keys) {
      info.add_pod_annotation_keys(k);
    }
  }
  return infos;
}

std::vector<std::string> enabled_plugin_names(const PluginGeneration& set) {
  std::set<std::string> names;
  for (const ProfilePlugins& profile : set.created->profiles()) {
    for (const PluginInstance* p : profile.plugins) names.insert(p->name());
  }
  return {names.begin(), names.end()};
}

}  // namespace schedplug::host
