// expect: PodAnnotationKeys must be `std::vector<std::string>
#include <schedplug/plugin.hpp>
struct P {
  static constexpr uint64_t kHints =
      SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
  std::vector<std::string> PodAnnotationKeys() { return {"a"}; }
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
