// expect: Unreserve undoes what Reserve or Permit did
#include <schedplug/plugin.hpp>
struct P {
  void Unreserve(const schedplug::Pod&, const schedplug::Node&) {}
};
SCHEDPLUG_PLUGIN(P, "P", "1")
