// expect: a class with a PodState type needs BeginPod to build it
#include <schedplug/plugin.hpp>
struct P {
  struct PodState {};
  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node&,
                           const PodState&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1.0.0")
