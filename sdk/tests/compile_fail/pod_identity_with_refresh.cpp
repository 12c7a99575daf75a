// expect: a plugin with Refresh cannot keep
#include <schedplug/plugin.hpp>
struct P {
  static constexpr uint32_t kRefreshPeriodMs = 1000;
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    return schedplug::Status::Success();
  }
  schedplug::Status Refresh() { return schedplug::Status::Success(); }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
