// expect: plugin name must be UpperCamelCase
#include <schedplug/plugin.hpp>
struct P {
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    return schedplug::Status::Success();
  }
};
SCHEDPLUG_PLUGIN(P, "hwEncrypt", "1")
