// The kit's undeclared-data check: AppSpread (app_spread.cpp) reads the
// node's pods; its build that does not declare SCHEDPLUG_DATA_NODE_PODS
// scores as the host would run it (no pods seen), and run() names the bit.
#include <gtest/gtest.h>

#include <schedplug/testing.hpp>
#include <vector>

namespace st = schedplug::testing;

namespace {

const st::Pod kPod = st::Pod("web-4").label("app", "web");

std::vector<st::Node> nodes() {
  return {st::Node("busy")
              .pod(st::NodePod("web-1").label("app", "web"))
              .pod(st::NodePod("web-2").label("app", "web"))
              .pod(st::NodePod("db-0").label("app", "db")),
          st::Node("idle")};
}

TEST(KitUndeclared, DeclaredDataPasses) {
  auto plugin = st::Plugin::load(SDK_TEST_APP_SPREAD_SO);
  EXPECT_EQ(plugin->data(), SCHEDPLUG_DATA_NODE_PODS);
  const st::Cycle cycle = plugin->run(kPod, nodes());
  EXPECT_EQ(st::compare(cycle, {{"busy", SCHEDPLUG_SKIP, "", 80},
                                {"idle", SCHEDPLUG_SKIP, "", 100}}),
            "");
}

TEST(KitUndeclared, UndeclaredBitIsNamed) {
  auto plugin = st::Plugin::load(SDK_TEST_APP_SPREAD_UNDECLARED_SO);
  EXPECT_EQ(plugin->data(), 0u);
  const st::Cycle cycle = plugin->run(kPod, nodes());
  // The rows are the host's: no pods seen, 100 everywhere.
  ASSERT_EQ(cycle.nodes.size(), 2u);
  EXPECT_EQ(cycle.nodes[0].score, 100);
  EXPECT_EQ(cycle.nodes[1].score, 100);
  EXPECT_EQ(cycle.error,
            "AppSpread reads data it did not declare "
            "(SCHEDPLUG_DATA_NODE_PODS): on node \"busy\" its score answered "
            "100 without it (as schedplug-host sends it) and 80 with it (as "
            "the test gave it); add SCHEDPLUG_DATA_NODE_PODS to the data it "
            "declares (settings->data in create(), kData in the C++ layer)");
  // compare() reports it as the cycle's failure.
  EXPECT_NE(st::compare(cycle, {{"busy", SCHEDPLUG_SKIP, "", 100},
                                {"idle", SCHEDPLUG_SKIP, "", 100}})
                .find("the cycle failed: AppSpread reads data it did not "
                      "declare (SCHEDPLUG_DATA_NODE_PODS)"),
            std::string::npos);
}

TEST(KitUndeclared, DataAnotherPluginDeclaredIsNotUndeclared) {
  auto plugin = st::Plugin::load(SDK_TEST_APP_SPREAD_UNDECLARED_SO);
  plugin->send_data(SCHEDPLUG_DATA_NODE_PODS);
  EXPECT_EQ(st::compare(plugin->run(kPod, nodes()),
                        {{"busy", SCHEDPLUG_SKIP, "", 80},
                         {"idle", SCHEDPLUG_SKIP, "", 100}}),
            "");
}

TEST(KitUndeclared, UndeclaredDataTheAnswersIgnoreIsNoProblem) {
  auto plugin = st::Plugin::load(SDK_TEST_APP_SPREAD_UNDECLARED_SO);
  // Pods with no "app" label: the node's pods change nothing.
  const st::Cycle cycle = plugin->run(st::Pod("lone"), nodes());
  EXPECT_EQ(st::compare(cycle, {{"busy", SCHEDPLUG_SKIP, "", 100},
                                {"idle", SCHEDPLUG_SKIP, "", 100}}),
            "");
}

// Several undeclared bits that change the answers are named together.
TEST(KitUndeclared, SeveralBitsAreNamedTogether) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO, R"({"data": 0})");
  const st::Pod pod = st::Pod("web")
                          .label("show", "pod")
                          .node_name("n7")
                          .priority_class_name("high");
  const st::Cycle cycle = plugin->run(pod, {st::Node("n1").unschedulable()});
  EXPECT_EQ(cycle.nodes.at(0).filter.reason,
            "node=- nominated=- class=- owners=");
  EXPECT_NE(cycle.error.find(
                "DataEcho reads data it did not declare "
                "(SCHEDPLUG_DATA_POD_NODE_NAME and "
                "SCHEDPLUG_DATA_POD_PRIORITY_CLASS): on node \"n1\" its filter "
                "answered Unschedulable"),
            std::string::npos)
      << cycle.error;
}

}  // namespace
