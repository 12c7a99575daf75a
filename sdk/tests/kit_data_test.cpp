// The test kit's builders for the declared data (ABI v1.2): a real plugin
// (DataEcho, data_echo.c) loaded through the kit spells out what it sees.
#include <gtest/gtest.h>

#include <schedplug/testing.hpp>
#include <string>

namespace st = schedplug::testing;

namespace {

// DataEcho's reason for `pod` (labelled show=<part>) on `node`.
std::string seen(const st::Plugin& plugin, st::Pod pod, const st::Node& node,
                 const std::string& part) {
  pod.label("show", part);
  const st::Verdict v = plugin.filter(pod, node);
  EXPECT_EQ(v.code, SCHEDPLUG_UNSCHEDULABLE) << v.reason;
  return v.reason;
}

st::Pod full_pod() {
  return st::Pod("web-3")
      .node_name("n7")
      .nominated_node_name("n2")
      .priority_class_name("high")
      .owner("ReplicaSet", "web-5d8")
      .owner("ConfigMap", "cfg", false)
      .container(st::Container("app", "nginx:1.27")
                     .request("memory", 64 << 20)
                     .request("cpu", 250)
                     .limit("cpu", 500)
                     .port({8080})
                     .port({53, 5353, "UDP", "127.0.0.1"}))
      .container(st::Container("sidecar", "envoy:1").request("cpu", 50));
}

st::Node full_node() {
  return st::Node("n1")
      .unschedulable()
      .condition("Ready", "False")
      .condition("MemoryPressure", "False")
      .condition("Ready", "True")  // replaces the first Ready
      .capacity("memory", 8ll << 30)
      .capacity("cpu", 4000)
      .pod(st::NodePod("web-1")
               .label("tier", "front")
               .label("app", "web")
               .request("cpu", 100)
               .owner_kind("ReplicaSet"))
      .pod(st::NodePod("db-0", "data").priority(1000).request("cpu", 250))
      .pod(st::NodePod("api", "default").request("memory", 1024));
}

TEST(KitData, PodFields) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO);
  EXPECT_EQ(plugin->data(), SCHEDPLUG_DATA_ALL);
  EXPECT_EQ(seen(*plugin, full_pod(), st::Node("n1"), "pod"),
            "node=n7 nominated=n2 class=high "
            "owners=ReplicaSet/web-5d8/1,ConfigMap/cfg/0");
}

TEST(KitData, ContainersInSpecOrderWithSortedResourcesAndPorts) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO);
  EXPECT_EQ(seen(*plugin, full_pod(), st::Node("n1"), "containers"),
            "containers=2 app:nginx:1.27 req[cpu=250,memory=67108864] "
            "lim[cpu=500] ports[8080/0/TCP/-,53/5353/UDP/127.0.0.1] "
            "sidecar:envoy:1 req[cpu=50] lim[] ports[]");
  // A container of the same name replaces the first.
  const st::Pod replaced =
      full_pod().container(st::Container("app", "nginx:1.28"));
  EXPECT_EQ(seen(*plugin, replaced, st::Node("n1"), "containers"),
            "containers=2 app:nginx:1.28 req[] lim[] ports[] "
            "sidecar:envoy:1 req[cpu=50] lim[] ports[]");
}

TEST(KitData, NodeFieldsAndCountsFromThePodList) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO);
  // pod_count and requested come from the listed pods, as on the host.
  EXPECT_EQ(seen(*plugin, st::Pod(), full_node(), "node"),
            "unschedulable=1 conditions[Ready=True,MemoryPressure=False] "
            "capacity[cpu=4000,memory=8589934592] pod_count=3 "
            "requested[cpu=350,memory=1024]");
  // Given explicitly, they are what was given.
  const st::Node explicit_counts =
      full_node().pod_count(7).requested("cpu", 900);
  EXPECT_EQ(seen(*plugin, st::Pod(), explicit_counts, "node"),
            "unschedulable=1 conditions[Ready=True,MemoryPressure=False] "
            "capacity[cpu=4000,memory=8589934592] pod_count=7 "
            "requested[cpu=900]");
  EXPECT_EQ(seen(*plugin, st::Pod(), st::Node("bare"), "node"),
            "unschedulable=0 conditions[] capacity[] pod_count=0 requested[]");
}

TEST(KitData, PodListSortedByNamespaceThenNameWithSortedLabels) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO);
  EXPECT_EQ(seen(*plugin, st::Pod(), full_node(), "pods"),
            "pods=3 data/db-0 1000 - labels[] req[cpu=250]; "
            "default/api 0 - labels[] req[memory=1024]; "
            "default/web-1 0 ReplicaSet labels[app=web,tier=front] "
            "req[cpu=100];");
  // Listed again (same namespace and name): replaced, not added.
  const st::Node again =
      full_node().pod(st::NodePod("api").priority(5).label("app", "api"));
  EXPECT_EQ(again.view().pod_count, 3u);
  EXPECT_EQ(seen(*plugin, st::Pod(), again, "pods"),
            "pods=3 data/db-0 1000 - labels[] req[cpu=250]; "
            "default/api 5 - labels[app=api] req[]; "
            "default/web-1 0 ReplicaSet labels[app=web,tier=front] "
            "req[cpu=100];");
}

TEST(KitData, UndeclaredDataIsEmptyAsOnTheHost) {
  auto plugin = st::Plugin::load(SDK_TEST_DATA_ECHO_SO, R"({"data": 0})");
  EXPECT_EQ(plugin->data(), 0u);
  EXPECT_EQ(seen(*plugin, full_pod(), full_node(), "pod"),
            "node=- nominated=- class=- owners=");
  EXPECT_EQ(seen(*plugin, full_pod(), full_node(), "containers"),
            "containers=0");
  // pod_count and requested are v1.0 data: always sent.
  EXPECT_EQ(seen(*plugin, full_pod(), full_node(), "node"),
            "unschedulable=0 conditions[] capacity[] pod_count=3 "
            "requested[cpu=350,memory=1024]");
  EXPECT_EQ(seen(*plugin, full_pod(), full_node(), "pods"), "pods=0");

  // Declared bit by bit: only those fields are filled.
  auto some =
      st::Plugin::load(SDK_TEST_DATA_ECHO_SO,
                       R"({"data": )" +
                           std::to_string(SCHEDPLUG_DATA_POD_NOMINATED_NODE |
                                          SCHEDPLUG_DATA_NODE_CONDITIONS) +
                           "}");
  EXPECT_EQ(seen(*some, full_pod(), full_node(), "pod"),
            "node=- nominated=n2 class=- owners=");
  EXPECT_EQ(seen(*some, full_pod(), full_node(), "node"),
            "unschedulable=0 conditions[Ready=True,MemoryPressure=False] "
            "capacity[] pod_count=3 requested[cpu=350,memory=1024]");

  // In a profile where another plugin declared more, the plugin sees it.
  plugin->send_data(SCHEDPLUG_DATA_POD_NODE_NAME | SCHEDPLUG_DATA_NODE_PODS);
  EXPECT_EQ(seen(*plugin, full_pod(), full_node(), "pod"),
            "node=n7 nominated=- class=- owners=");
  EXPECT_NE(seen(*plugin, full_pod(), full_node(), "pods"), "pods=0");
}

// ABI v1.3 data, declared or not.
TEST(KitData, V13DataOnlyWhenDeclared) {
  st::AffinityTerm anti;
  anti.topology_key = "kubernetes.io/hostname";
  anti.label_selector = st::Selector{{{"app", "web"}}, {}};
  st::SpreadConstraint spread;
  spread.topology_key = "zone";
  const st::Pod pod = st::Pod("p")
                          .volume("data", "persistentVolumeClaim", "pvc-1")
                          .node_affinity_required({{{"zone", "In", {"a"}}}, {}})
                          .topology_spread(spread)
                          .pod_anti_affinity_required(anti);
  const st::Node node = st::Node("n1").image({"img:1"}, 1000);
  auto all = st::Plugin::load(SDK_TEST_DATA_ECHO_SO);
  EXPECT_EQ(seen(*all, pod, node, "v1.3"),
            "volumes=1 images=1 nodeAffinity=1/0 spread=1 "
            "podAffinity=0/0/1/0");
  auto none = st::Plugin::load(SDK_TEST_DATA_ECHO_SO, R"({"data": 0})");
  EXPECT_EQ(seen(*none, pod, node, "v1.3"),
            "volumes=0 images=0 nodeAffinity=0/0 spread=0 "
            "podAffinity=0/0/0/0");
  auto some = st::Plugin::load(SDK_TEST_DATA_ECHO_SO,
                               R"({"data": )" +
                                   std::to_string(SCHEDPLUG_DATA_POD_VOLUMES |
                                                  SCHEDPLUG_DATA_POD_AFFINITY) +
                                   "}");
  EXPECT_EQ(seen(*some, pod, node, "v1.3"),
            "volumes=1 images=0 nodeAffinity=0/0 spread=0 "
            "podAffinity=0/0/1/0");
}

TEST(KitData, RunAndBeginPodSeeTheSameData) {
  auto plugin = st::Plugin::load(
      SDK_TEST_DATA_ECHO_SO,
      R"({"data": )" + std::to_string(SCHEDPLUG_DATA_POD_NODE_NAME) + "}");
  const st::Pod pod = full_pod().label("show", "pod");
  const st::Cycle cycle = plugin->run(pod, {full_node()});
  // The row is the host's; the undeclared data the plugin read is named.
  ASSERT_EQ(cycle.nodes.size(), 1u);
  EXPECT_EQ(cycle.nodes[0].filter.reason,
            "node=n7 nominated=- class=- owners=");
  EXPECT_EQ(cycle.error.rfind("DataEcho reads data it did not declare "
                              "(SCHEDPLUG_DATA_POD_NOMINATED_NODE, "
                              "SCHEDPLUG_DATA_POD_PRIORITY_CLASS and "
                              "SCHEDPLUG_DATA_POD_OWNERS): on node \"n1\"",
                              0),
            0u)
      << cycle.error;
  const st::PodScope scope = plugin->begin_pod(pod);
  EXPECT_EQ(scope.pod().nominated_node_name.len, 0u);
  EXPECT_EQ(std::string(scope.pod().node_name.data, scope.pod().node_name.len),
            "n7");
}

TEST(KitData, ViewsAreBuiltAsTheHostBuildsThem) {
  // Empty lists are NULL, as in the host's pod and node models; a copy has its
  // own storage.
  const st::Pod bare("p");
  EXPECT_EQ(bare.view().owners, nullptr);
  EXPECT_EQ(bare.view().containers, nullptr);
  const st::Node node_copy = full_node();
  const st::Node empty("e");
  EXPECT_EQ(empty.view().conditions, nullptr);
  EXPECT_EQ(empty.view().pod_list, nullptr);
  const schedplug_node& v = node_copy.view();
  ASSERT_EQ(v.pod_list_count, 3u);
  EXPECT_EQ(schedplug_node_pod_at(&v, 2)->labels.count, 2u);
  EXPECT_EQ(v.node_pod_size, sizeof(schedplug_node_pod));
  EXPECT_EQ(v.condition_size, sizeof(schedplug_node_condition));
  const st::Pod pod = full_pod();
  const st::Pod pod_copy = pod;  // its own storage
  const schedplug_pod& pv = pod_copy.view();
  ASSERT_EQ(pv.container_count, 2u);
  EXPECT_NE(pv.containers, pod.view().containers);
  EXPECT_EQ(schedplug_pod_container(&pv, 0)->port_count, 2u);
  EXPECT_EQ(pv.port_size, sizeof(schedplug_container_port));
}

}  // namespace
