// expect: a promise about Score, but the class has no Score
#include <schedplug/plugin.hpp>
struct P {
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
