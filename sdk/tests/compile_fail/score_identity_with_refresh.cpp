// expect: SCORE_IGNORES_POD_IDENTITY, which a plugin with Refresh cannot keep
#include <schedplug/plugin.hpp>
struct P {
  static constexpr uint32_t kRefreshPeriodMs = 1000;
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node&,
                          int64_t& score) const {
    score = 1;
    return schedplug::Status::Success();
  }
  schedplug::Status Refresh() { return schedplug::Status::Success(); }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
