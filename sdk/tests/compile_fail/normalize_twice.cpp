// expect: declare either NormalizeScore or kNormalize, not both
#include <schedplug/plugin.hpp>
struct P {
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_LINEAR;
  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node&,
                          int64_t& s) const {
    s = 0;
    return schedplug::Status::Success();
  }
  schedplug::Status NormalizeScore(const schedplug::Pod&,
                                   std::span<schedplug_node_score>) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
