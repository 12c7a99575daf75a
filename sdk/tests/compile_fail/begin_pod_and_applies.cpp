// expect: declare either BeginPod (it gates too) or Applies, not both
#include <schedplug/plugin.hpp>
struct P {
  struct PodState {};
  schedplug::Status BeginPod(const schedplug::Pod&, PodState&,
                             schedplug::Gates&) const {
    return schedplug::Status::Success();
  }
  bool Applies(const schedplug::Pod&) const { return true; }
  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node&,
                           const PodState&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1.0.0")
