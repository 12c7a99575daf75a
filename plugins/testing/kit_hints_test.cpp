// The test kit holds a plugin to its hints: a plugin that promises
// SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS must answer the same on a node
// with and without its pods, or its tests fail, naming the broken promise.
#include <gtest/gtest.h>

#include <string>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

TEST(KitHints, ABrokenPromiseFailsTheCycleNamingIt) {
  auto plugin = create_plugin(FALSE_PROMISE_SO);
  EXPECT_EQ(plugin->settings().hints, SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS);
  Pod pod("web");
  Node idle("idle");
  Node busy("busy");
  busy.pod_count(3);
  // No pods: the same verdict either way, so the promise holds there.
  EXPECT_EQ(plugin->filter(pod, idle).code, SCHEDPLUG_SUCCESS);
  const Verdict v = plugin->filter(pod, busy);
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_NE(v.reason.find("FalsePromise promised "
                          "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS (kHints), "
                          "but its filter on node \"busy\" answered "
                          "Unschedulable (\"node(s) already run pods\") with "
                          "the node's pods and Success without them; drop the "
                          "hint"),
            std::string::npos)
      << v.reason;
  EXPECT_EQ(plugin->run(pod, {idle, busy}).error, v.reason);
}

TEST(KitHints, AKeptPromisePassesOnNodesWithPods) {
  // HwEncrypt promises it and reads only a label.
  auto plugin = create_plugin(HW_ENCRYPT_SO);
  EXPECT_EQ(plugin->settings().hints, SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS);
  Pod pod("web");
  pod.annotation("myorg.io/require-hw-encrypt", "true");
  Node busy("busy");
  busy.pod_count(3).requested("cpu", 500);
  const Verdict v = plugin->filter(pod, busy);
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE) << v.reason;
}

}  // namespace
}  // namespace schedplug::testing
