// expect: use of deleted function
#include <schedplug/plugin.hpp>
struct P {
  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node&) const {
    // A view of a temporary would dangle: must not compile.
    return schedplug::Status::Unschedulable(schedplug::Reason("node(s) x"));
  }
};
SCHEDPLUG_PLUGIN(P, "P", "1")
