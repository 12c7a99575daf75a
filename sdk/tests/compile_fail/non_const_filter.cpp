// expect: Filter must be `schedplug::Status Filter(const schedplug::Pod&
#include <schedplug/plugin.hpp>
struct P {
  schedplug::Status Filter(const schedplug::Pod&, const schedplug::Node&) {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
