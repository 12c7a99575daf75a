#include "tools/schedplug/bit_names.hpp"

#include <span>
#include <utility>

#include "schedplug/plugin.h"

namespace schedplug::tools {
namespace {

using Name = std::pair<uint64_t, const char*>;

std::vector<std::string> names_of(uint64_t mask, std::span<const Name> names) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t one = 1ull << bit;
    if ((mask & one) == 0) continue;
    bool known = false;
    for (const auto& [value, name] : names) {
      if (value == one) {
        out.emplace_back(name);
        known = true;
      }
    }
    if (!known) out.push_back("Unknown(bit " + std::to_string(bit) + ")");
  }
  return out;
}

constexpr Name kEvents[] = {
    {SCHEDPLUG_EVENT_NODE_ADD, "NodeAdd"},
    {SCHEDPLUG_EVENT_NODE_DELETE, "NodeDelete"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_LABEL, "NodeUpdateLabel"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_TAINT, "NodeUpdateTaint"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE, "NodeUpdateAllocatable"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_ANNOTATION, "NodeUpdateAnnotation"},
    {SCHEDPLUG_EVENT_NODE_UPDATE_CONDITION, "NodeUpdateCondition"},
    {SCHEDPLUG_EVENT_POD_ADD, "PodAdd"},
    {SCHEDPLUG_EVENT_POD_DELETE, "PodDelete"},
    {SCHEDPLUG_EVENT_POD_UPDATE_LABEL, "PodUpdateLabel"},
};

constexpr Name kData[] = {
    {SCHEDPLUG_DATA_POD_NODE_NAME, "PodNodeName"},
    {SCHEDPLUG_DATA_POD_NOMINATED_NODE, "PodNominatedNode"},
    {SCHEDPLUG_DATA_POD_PRIORITY_CLASS, "PodPriorityClass"},
    {SCHEDPLUG_DATA_POD_OWNERS, "PodOwners"},
    {SCHEDPLUG_DATA_POD_CONTAINERS, "PodContainers"},
    {SCHEDPLUG_DATA_NODE_UNSCHEDULABLE, "NodeUnschedulable"},
    {SCHEDPLUG_DATA_NODE_CONDITIONS, "NodeConditions"},
    {SCHEDPLUG_DATA_NODE_CAPACITY, "NodeCapacity"},
    {SCHEDPLUG_DATA_NODE_PODS, "NodePods"},
    {SCHEDPLUG_DATA_POD_VOLUMES, "PodVolumes"},
    {SCHEDPLUG_DATA_NODE_IMAGES, "NodeImages"},
    {SCHEDPLUG_DATA_POD_NODE_AFFINITY, "PodNodeAffinity"},
    {SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD, "PodTopologySpread"},
    {SCHEDPLUG_DATA_POD_AFFINITY, "PodAffinity"},
};

constexpr Name kHints[] = {
    {SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS, "FilterIgnoresNodePods"},
    {SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY, "FilterIgnoresPodIdentity"},
    {SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS,
     "FilterReadsDeclaredPodKeys"},
    {SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY, "ScoreIgnoresPodIdentity"},
};

}  // namespace

std::vector<std::string> event_names(uint64_t events) {
  return names_of(events, kEvents);
}
std::vector<std::string> data_names(uint64_t data) {
  return names_of(data, kData);
}
std::vector<std::string> hint_names(uint64_t hints) {
  return names_of(hints, kHints);
}

}  // namespace schedplug::tools
