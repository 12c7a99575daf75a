// AppSpread, a test plugin for the kit's undeclared-data check: its score
// is 100 less 10 for each pod of the node's pod list with the pod's "app"
// label, so replicas spread. It reads the node's pods, so kData declares
// SCHEDPLUG_DATA_NODE_PODS. Built with APP_SPREAD_UNDECLARED it declares
// nothing: on the host it sees no pods and scores 100 everywhere, the mistake
// the kit must name (kit_undeclared_test.cpp, kit_undeclared_test.c).
#include <schedplug/plugin.hpp>

class AppSpread {
 public:
#ifdef APP_SPREAD_UNDECLARED
  static constexpr uint64_t kData = 0;
#else
  static constexpr uint64_t kData = SCHEDPLUG_DATA_NODE_PODS;
#endif

  schedplug::Status Score(const schedplug::Pod& pod,
                          const schedplug::Node& node, int64_t& score) const {
    const auto app = pod.label("app");
    int64_t same = 0;
    for (size_t i = 0; app && i < node.pod_list_count(); ++i) {
      if (node.pod_list(i).label("app") == app) ++same;
    }
    score = same >= 10 ? 0 : 100 - 10 * same;
    return schedplug::Status::Success();
  }
};

SCHEDPLUG_PLUGIN(AppSpread, "AppSpread", "1.0.0")
