// CpuRoom, a test plugin for the kit's declared events: its filter passes a
// pod when the node's free CPU (allocatable - requested) covers the pod's
// request. A pod it rejected may fit once a node is added, a node's
// allocatable grows or a pod on a node goes away, so kEvents declares those
// three. Built with CPU_ROOM_UNDER_DECLARED it declares only the second, the
// mistake the kit must report (kit_events_test.cpp, kit_events_test.c).
#include <schedplug/plugin.hpp>

class CpuRoom {
 public:
#ifdef CPU_ROOM_UNDER_DECLARED
  static constexpr uint64_t kEvents = SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE;
#else
  static constexpr uint64_t kEvents = SCHEDPLUG_EVENT_NODE_ADD |
                                      SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE |
                                      SCHEDPLUG_EVENT_POD_DELETE;
#endif

  schedplug::Status Filter(const schedplug::Pod& pod,
                           const schedplug::Node& node) const {
    if (node.free("cpu") >= pod.request("cpu")) {
      return schedplug::Status::Success();
    }
    return schedplug::Status::Unschedulable("node(s) lack free CPU");
  }
};

SCHEDPLUG_PLUGIN(CpuRoom, "CpuRoom", "1.0.0")
