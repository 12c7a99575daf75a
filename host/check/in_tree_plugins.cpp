// The upstream in-tree plugin names, copied from
// pkg/scheduler/framework/plugins/names/names.go of k8s.io/kubernetes
// v1.37.2. A profile may enable these without any .so; a .so may not
// report one of them. Update this list when the targeted version changes.
#include <algorithm>

#include "host/check/name_check.hpp"

namespace schedplug::host {

const std::vector<std::string>& in_tree_plugin_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = {
        "PrioritySort",
        "DefaultBinder",
        "DefaultPreemption",
        "DynamicResources",
        "GangScheduling",
        "ImageLocality",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeDeclaredFeatures",
        "NodeName",
        "NodePorts",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "NodeUnschedulable",
        "NodeVolumeLimits",
        "PodTopologySpread",
        "DeferredPodScheduling",
        "SchedulingGates",
        "TaintToleration",
        "VolumeBinding",
        "VolumeRestrictions",
        "VolumeZone",
        "TopologyPlacementGenerator",
        "PodGroupPodsCount",
    };
    std::sort(names.begin(), names.end());
    return names;
  }();
  return kNames;
}

bool is_in_tree_plugin(const std::string& name) {
  const auto& names = in_tree_plugin_names();
  return std::binary_search(names.begin(), names.end(), name);
}

}  // namespace schedplug::host
