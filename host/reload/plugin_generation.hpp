// One generation of the host's plugins: the libraries, the configuration
// as read, the created instances and their background refresh.
//
// A call takes the current generation when it begins and runs on it to its end;
// a pod cycle keeps the generation it began with (PodCycle::owner), so its
// single-node Filter and PreScore calls run on the instances its
// PreFilter began the pod with. A reload (plugin_reload.hpp) builds the
// next generation, taking over every instance whose library and args did not
// change, and swaps it in between calls; an old generation, and the instances
// and libraries only it holds, go away when the last call or cycle using it
// ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/config/resolve.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/plugin/created_plugins.hpp"
#include "schedplug/v1/schedplug.pb.h"

namespace schedplug::host {

class HostMetrics;
class InstanceRefresh;

struct PluginGeneration {
  // 1 at start-up, one more at each reload that swapped one in.
  uint64_t generation = 1;
  // The configuration file's bytes this generation was resolved from.
  std::string config_bytes;
  std::vector<std::shared_ptr<PluginLibrary>> libraries;  // sorted by file
  std::vector<ResolvedProfile> resolved;
  // The name checks' warnings, told to every Handshake.
  std::vector<std::string> warnings;
  std::unique_ptr<CreatedPlugins> created;
  // The background refresh of each instance with a refresh hook, shared
  // with the generations that took the instance over. After `created`, so that
  // refresh stops before an instance is destroyed.
  std::unordered_map<const PluginInstance*, std::shared_ptr<InstanceRefresh>>
      refreshes;
  // HostIdentity.build: of config_bytes and every library's digest.
  uint64_t build = 0;
  // Per profile: the weight of each native scorer, as kube-scheduler
  // applies it (for Explain).
  std::unordered_map<std::string, std::vector<int>> score_weights;

  PluginGeneration() = default;
  PluginGeneration(const PluginGeneration&) = delete;
  PluginGeneration& operator=(const PluginGeneration&) = delete;
  ~PluginGeneration();

  // Stops the refresh of every instance (host shutdown).
  void stop_refresh() const;
};

// What a generation is made of; `libraries` sorted by file.
struct GenerationParts {
  std::string config_bytes;
  std::vector<std::shared_ptr<PluginLibrary>> libraries;
  std::vector<ResolvedProfile> resolved;
  std::vector<std::string> warnings;
  // At start-up: the instances the start-up check created
  // (host/check/startup_check.hpp), taken over when there is no previous
  // generation.
  std::unique_ptr<CreatedPlugins> checked;
};

// Creates the generation's instances, taking over `previous`'s (when set) whose
// library object and args are the same. Throws CreateError. Refresh starts
// with start_refresh().
std::shared_ptr<PluginGeneration> make_generation(
    GenerationParts parts, const PluginGeneration* previous);

// Starts the background refresh of every instance `set` created, and
// shares `previous`'s for the instances it took over. `metrics` may be
// null.
void start_refresh(PluginGeneration& set, const PluginGeneration* previous,
                   HostMetrics* metrics);

// What the shim learns of each of the generation's plugins at Handshake, in
// `libraries` order: name, version, file, digest, hooks, and what its
// instances declare (events, data, hints, pod keys).
std::vector<v1::PluginInfo> plugin_infos(const PluginGeneration& set);

// Every native plugin the generation's profiles enable, by name.
std::vector<std::string> enabled_plugin_names(const PluginGeneration& set);

}  // namespace schedplug::host
