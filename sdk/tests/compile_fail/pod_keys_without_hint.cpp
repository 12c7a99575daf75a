// expect: add the hint to kHints
#include <schedplug/plugin.hpp>
struct P {
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS;
  std::vector<std::string> PodLabelKeys() const { return {"app"}; }
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
