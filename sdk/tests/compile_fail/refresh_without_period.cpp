// expect: a plugin with Refresh must declare
#include <schedplug/plugin.hpp>
struct P {
  schedplug::Status Refresh() { return schedplug::Status::Success(); }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
