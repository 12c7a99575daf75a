// expect: PreBind must be `schedplug::Status PreBind(const schedplug::Pod&
#include <schedplug/plugin.hpp>
struct P {
  schedplug::Status PreBind(const schedplug::Pod&, const schedplug::Node&) {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
