#include "host/model/models.hpp"

#include <gtest/gtest.h>

namespace schedplug::host {
namespace {

std::string str(schedplug_str s) { return std::string(s.data, s.len); }

TEST(PodModel, SortsKeyedListsAndKeepsLastDuplicate) {
  PodData data;
  data.namespace_name = "team-a";
  data.name = "web-0";
  data.uid = "u-1";
  data.priority = 7;
  data.labels = {{"zone", "b"}, {"app", "web"}, {"zone", "a"}};
  data.requests = {{"memory", 1024}, {"cpu", 500}};
  data.node_selector = {{"disk", "ssd"}};
  data.tolerations = {{"gpu", "Exists", "", "NoSchedule", std::nullopt},
                      {"maint", "Equal", "yes", "NoExecute", 30}};
  PodModel pod(std::move(data));
  const auto& v = pod.view();

  EXPECT_EQ(v.struct_size, sizeof(schedplug_pod));
  EXPECT_EQ(str(v.namespace_name), "team-a");
  EXPECT_EQ(str(v.name), "web-0");
  EXPECT_EQ(str(v.uid), "u-1");
  EXPECT_EQ(v.priority, 7);
  ASSERT_EQ(v.labels.count, 2u);
  EXPECT_EQ(str(v.labels.items[0].key), "app");
  EXPECT_EQ(str(v.labels.items[1].key), "zone");
  EXPECT_EQ(str(v.labels.items[1].value), "a");  // the later entry wins
  const schedplug_kv* zone = schedplug_kv_find(v.labels, "zone");
  ASSERT_NE(zone, nullptr);
  EXPECT_EQ(str(zone->value), "a");
  EXPECT_EQ(schedplug_resource_get(v.requests, "cpu"), 500);
  EXPECT_EQ(schedplug_resource_get(v.requests, "memory"), 1024);
  EXPECT_EQ(schedplug_resource_get(v.requests, "pods"), 0);
  EXPECT_NE(schedplug_kv_find(v.node_selector, "disk"), nullptr);
  ASSERT_EQ(v.toleration_count, 2u);
  EXPECT_EQ(str(v.tolerations[0].op), "Exists");
  EXPECT_EQ(v.tolerations[0].has_toleration_seconds, 0);
  EXPECT_EQ(v.tolerations[1].has_toleration_seconds, 1);
  EXPECT_EQ(v.tolerations[1].toleration_seconds, 30);
}

TEST(NodeModel, ViewsPointIntoTheModel) {
  NodeData data;
  data.name = "node-1";
  data.labels = {{"b", "2"}, {"a", "1"}};
  data.taints = {{"dedicated", "db", "NoSchedule"}};
  data.allocatable = {{"pods", 110}, {"cpu", 4000}, {"nvidia.com/gpu", 2}};
  data.requested = {{"cpu", 1500}};
  data.pod_count = 12;
  NodeModel node(std::move(data));
  const auto& v = node.view();

  EXPECT_EQ(v.struct_size, sizeof(schedplug_node));
  EXPECT_EQ(node.name(), "node-1");
  EXPECT_EQ(str(v.name), "node-1");
  EXPECT_EQ(v.name.data, node.data().name.data());
  ASSERT_EQ(v.labels.count, 2u);
  EXPECT_EQ(str(v.labels.items[0].key), "a");
  ASSERT_EQ(v.taint_count, 1u);
  EXPECT_EQ(str(v.taints[0].effect), "NoSchedule");
  EXPECT_EQ(schedplug_resource_get(v.allocatable, "cpu"), 4000);
  EXPECT_EQ(schedplug_resource_get(v.allocatable, "nvidia.com/gpu"), 2);
  EXPECT_EQ(schedplug_resource_get(v.allocatable, "pods"), 110);
  EXPECT_EQ(schedplug_resource_get(v.requested, "cpu"), 1500);
  EXPECT_EQ(v.pod_count, 12u);
  // The model's data is sorted too, so data() and view() agree.
  EXPECT_EQ(node.data().labels.front().first, "a");
}

TEST(NodeModel, EmptyListsAreValidViews) {
  NodeModel node(
      NodeData{"bare", {}, {}, {}, {}, {}, 0, false, {}, {}, {}, {}});
  EXPECT_EQ(node.view().labels.count, 0u);
  EXPECT_EQ(schedplug_kv_find(node.view().labels, "x"), nullptr);
  EXPECT_EQ(schedplug_resource_get(node.view().allocatable, "cpu"), 0);
}

}  // namespace
}  // namespace schedplug::host
