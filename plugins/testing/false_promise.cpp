// FalsePromise: a test plugin that promises
// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS and breaks it (its filter rejects
// nodes that already run pods), so that kit_hints_test can show the kit catches
// the broken promise. Built outside plugins.d: never loaded by a host.
#include <schedplug/plugin.hpp>

namespace {

class FalsePromise {
 public:
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS;

  schedplug::Status Filter(const schedplug::Pod&,
                           const schedplug::Node& node) const {
    if (node.pod_count() > 0) {
      return schedplug::Status::Unschedulable("node(s) already run pods");
    }
    return schedplug::Status::Success();
  }
};

}  // namespace

SCHEDPLUG_PLUGIN(FalsePromise, "FalsePromise", "1.0.0")
