#include "tools/schedplug/event_names.hpp"

#include <array>
#include <utility>

#include "schedplug/plugin.h"

namespace schedplug::tools {

std::vector<std::string> event_names(uint64_t events) {
  static constexpr std::array<std::pair<uint64_t, const char*>, 10> kNames = {{
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
  }};
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t mask = 1ull << bit;
    if ((events & mask) == 0) continue;
    bool known = false;
    for (const auto& [value, name] : kNames) {
      if (value == mask) {
        out.emplace_back(name);
        known = true;
      }
    }
    if (!known) out.push_back("Unknown(bit " + std::to_string(bit) + ")");
  }
  return out;
}

}  // namespace schedplug::tools
