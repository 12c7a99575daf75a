// The node table and its models: CompactNode and PodModel copy and view every
// field a plugin may declare, and NodeTable applies full tables and deltas. One
// file: the table cases build their nodes through the same CompactNode copy the
// model cases check.
#include "host/table/node_table.hpp"

#include <gtest/gtest.h>

#include "host/model/models.hpp"
#include "schedplug/cpp/views.hpp"

namespace schedplug::host {
namespace {

NodeUpsert node(uint32_t slot, const std::string& name,
                int64_t generation = 1) {
  NodeData data;
  data.name = name;
  data.labels = {{"zone", "a"}};
  const NodeModel model(std::move(data));
  return {slot, generation, CompactNode::copy_of(model.view())};
}

TableDelta full(uint64_t version, std::vector<NodeUpsert> upserts) {
  TableDelta d;
  d.full = true;
  d.new_version = version;
  d.upserts = std::move(upserts);
  return d;
}

TableDelta delta(uint64_t base, uint64_t next, std::vector<NodeUpsert> upserts,
                 std::vector<uint32_t> removed = {}) {
  TableDelta d;
  d.base_version = base;
  d.new_version = next;
  d.upserts = std::move(upserts);
  d.removed = std::move(removed);
  return d;
}

std::string name_at(const NodeTable& t, uint32_t slot) {
  const CompactNode* r = t.at(slot);
  return r ? std::string(r->name()) : std::string("<empty>");
}

void expect_refused(NodeTable& table, const TableDelta& d,
                    DeltaError::Kind kind, const std::string& words) {
  const uint64_t version = table.version();
  const size_t size = table.size();
  try {
    table.apply(d);
    FAIL() << "the delta was accepted";
  } catch (const DeltaError& e) {
    EXPECT_EQ(e.kind(), kind);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  EXPECT_EQ(table.version(), version);
  EXPECT_EQ(table.size(), size);
}

std::string str(schedplug_str s) {
  return std::string(s.data ? s.data : "", s.len);
}

TEST(CompactNode, CopiesEveryFieldOfTheView) {
  NodeData data;
  data.name = "node-with-a-long-name";
  data.labels = {
      {"topology.kubernetes.io/zone", "zone-a"}, {"b", ""}, {"a", "1"}};
  data.annotations = {{"note", "annotation value that is long enough"}};
  data.taints = {{"dedicated", "gpu", "NoSchedule"}, {"k", "", "NoExecute"}};
  data.allocatable = {{"memory", 1 << 30}, {"cpu", 4000}};
  data.requested = {{"cpu", 250}};
  data.pod_count = 7;
  const NodeModel model(std::move(data));
  const auto compact = CompactNode::copy_of(model.view());
  const schedplug_node& a = model.view();
  const schedplug_node& b = compact->view();
  EXPECT_EQ(compact->name(), "node-with-a-long-name");
  EXPECT_EQ(b.struct_size, sizeof(schedplug_node));
  EXPECT_EQ(b.pod_count, 7u);
  ASSERT_EQ(b.labels.count, a.labels.count);
  for (size_t i = 0; i < a.labels.count; ++i) {
    EXPECT_EQ(str(b.labels.items[i].key), str(a.labels.items[i].key));
    EXPECT_EQ(str(b.labels.items[i].value), str(a.labels.items[i].value));
    EXPECT_NE(b.labels.items[i].key.data,
              a.labels.items[i].key.data);  // a copy
  }
  EXPECT_NE(schedplug_kv_find(b.labels, "topology.kubernetes.io/zone"),
            nullptr);
  ASSERT_EQ(b.annotations.count, 1u);
  EXPECT_EQ(str(b.annotations.items[0].value),
            "annotation value that is long enough");
  ASSERT_EQ(b.taint_count, 2u);
  EXPECT_EQ(str(b.taints[1].effect), "NoExecute");
  EXPECT_EQ(str(b.taints[1].value), "");
  EXPECT_EQ(schedplug_resource_get(b.allocatable, "cpu"), 4000);
  EXPECT_EQ(schedplug_resource_get(b.allocatable, "memory"), 1 << 30);
  EXPECT_EQ(schedplug_resource_get(b.requested, "cpu"), 250);
  EXPECT_LT(compact->block_bytes(), 1024u);
}

// ABI v1.2 data: the node table's compact copy keeps every declared field,
// read here through the C helpers and the C++ layer's views.
TEST(CompactNode, CopiesTheDeclaredData) {
  NodeData data;
  data.name = "n1";
  data.unschedulable = true;
  data.conditions = {{"MemoryPressure", "False"}, {"Ready", "True"}};
  data.capacity = {{"memory", 8LL << 30}, {"cpu", 4000}};
  data.pod_count = 2;
  data.pods = {{"ns",
                "web-2",
                {{"app", "web"}, {"tier", "front"}},
                5,
                {{"cpu", 250}, {"pods", 1}},
                "ReplicaSet"},
               {"default", "db-0", {{"app", "db"}}, 0, {{"cpu", 100}}, ""}};
  const NodeModel model(std::move(data));
  const auto compact = CompactNode::copy_of(model.view());
  const schedplug_node& c = compact->view();
  EXPECT_EQ(schedplug_node_unschedulable(&c), 1);
  ASSERT_EQ(schedplug_node_condition_count(&c), 2u);
  EXPECT_EQ(str(schedplug_node_condition_at(&c, 1)->status), "True");
  EXPECT_EQ(schedplug_node_capacity(&c, "cpu"), 4000);
  EXPECT_EQ(schedplug_node_capacity(&c, "memory"), 8LL << 30);
  ASSERT_EQ(schedplug_node_pod_list_count(&c), 2u);
  EXPECT_NE(schedplug_node_pod_at(&c, 0)->name.data,
            model.view().pod_list[0].name.data);  // a copy

  const schedplug::Node node(c);
  EXPECT_TRUE(node.unschedulable());
  EXPECT_EQ(node.condition_status("Ready"), "True");
  EXPECT_EQ(node.condition_status("MemoryPressure"), "False");
  EXPECT_FALSE(node.condition_status("DiskPressure").has_value());
  EXPECT_EQ(node.capacity("cpu"), 4000);
  ASSERT_EQ(node.pod_list_count(), 2u);
  // Sorted by namespace, then name.
  EXPECT_EQ(node.pod_list(0).namespace_name(), "default");
  EXPECT_EQ(node.pod_list(0).name(), "db-0");
  EXPECT_EQ(node.pod_list(0).owner_kind(), "");
  const schedplug::NodePod web = node.pod_list(1);
  EXPECT_EQ(web.name(), "web-2");
  EXPECT_EQ(web.label("app"), "web");
  EXPECT_EQ(web.label("tier"), "front");
  EXPECT_EQ(web.priority(), 5);
  EXPECT_EQ(web.requests().get("cpu"), 250);
  EXPECT_EQ(web.requests().get("pods"), 1);
  EXPECT_EQ(web.owner_kind(), "ReplicaSet");

  // Nothing declared: the v1.2 fields stay empty.
  NodeData bare;
  bare.name = "n2";
  const NodeModel bare_model(std::move(bare));
  // The view borrows from the copy: keep the copy alive while it is read.
  const auto bare_copy = CompactNode::copy_of(bare_model.view());
  const schedplug::Node empty(bare_copy->view());
  EXPECT_FALSE(empty.unschedulable());
  EXPECT_EQ(empty.condition_count(), 0u);
  EXPECT_EQ(empty.capacity("cpu"), 0);
  EXPECT_EQ(empty.pod_list_count(), 0u);
}

// ABI v1.2 data of the pod being scheduled, through the C++ layer's views.
TEST(PodModel, ViewsTheDeclaredData) {
  PodData data;
  data.name = "p";
  data.node_name = "n7";
  data.nominated_node_name = "n2";
  data.priority_class_name = "high";
  data.owners = {{"ReplicaSet", "rs", true}, {"Other", "o", false}};
  data.containers = {{"main",
                      "img:1",
                      {{"memory", 1 << 20}, {"cpu", 250}},
                      {{"cpu", 500}},
                      {{8080, 9090, "TCP", ""}, {53, 0, "UDP", "10.0.0.1"}}},
                     {"sidecar", "img:2", {}, {}, {}}};
  const PodModel model(std::move(data));
  const schedplug::Pod pod(model.view());
  EXPECT_EQ(pod.node_name(), "n7");
  EXPECT_EQ(pod.nominated_node_name(), "n2");
  EXPECT_EQ(pod.priority_class_name(), "high");
  ASSERT_EQ(pod.owner_count(), 2u);
  EXPECT_EQ(pod.owner(0).kind, "ReplicaSet");
  EXPECT_TRUE(pod.owner(0).controller);
  EXPECT_FALSE(pod.owner(1).controller);
  ASSERT_EQ(pod.container_count(), 2u);
  const schedplug::Container app = pod.container(0);
  EXPECT_EQ(app.image(), "img:1");
  EXPECT_EQ(app.requests().get("cpu"), 250);
  EXPECT_EQ(app.requests().get("memory"), 1 << 20);
  EXPECT_EQ(app.limits().get("cpu"), 500);
  ASSERT_EQ(app.port_count(), 2u);
  EXPECT_EQ(app.port(0).container_port, 8080);
  EXPECT_EQ(app.port(0).host_port, 9090);
  EXPECT_EQ(app.port(1).protocol, "UDP");
  EXPECT_EQ(app.port(1).host_ip, "10.0.0.1");
  EXPECT_EQ(pod.container(1).name(), "sidecar");
  EXPECT_EQ(pod.container(1).port_count(), 0u);
}

// ABI v1.3 data: a node's images survive the compact copy (short names
// from the string pool, a name longer than the pool takes in the block).
TEST(CompactNode, CopiesTheNodeImages) {
  const std::string digest =
      "registry.example/team/web@sha256:" + std::string(64, 'a') + "/" +
      std::string(64, 'b');  // over StringPool::kMaxLength
  NodeData data;
  data.name = "n1";
  data.images = {{{digest, "registry.example/team/web:1.2"}, 123 << 20},
                 {{"registry.k8s.io/pause:3.10"}, 700 << 10},
                 {{}, 5}};
  const NodeModel model(std::move(data));
  const auto compact = CompactNode::copy_of(model.view());
  const schedplug_node& c = compact->view();
  ASSERT_EQ(schedplug_node_image_count(&c), 3u);
  const schedplug_node_image* first = schedplug_node_image_at(&c, 0);
  ASSERT_EQ(first->name_count, 2u);
  EXPECT_EQ(str(first->names[0]), digest);
  EXPECT_NE(first->names[0].data, model.view().images[0].names[0].data);
  EXPECT_EQ(first->size_bytes, 123 << 20);

  const schedplug::Node node(c);
  ASSERT_EQ(node.image_count(), 3u);
  EXPECT_EQ(node.image(0).name(1), "registry.example/team/web:1.2");
  EXPECT_TRUE(node.image(1).has_name("registry.k8s.io/pause:3.10"));
  EXPECT_FALSE(node.image(1).has_name("registry.k8s.io/pause"));
  EXPECT_EQ(node.image(1).size_bytes(), 700 << 10);
  EXPECT_EQ(node.image(2).name_count(), 0u);
  EXPECT_EQ(node.image(2).size_bytes(), 5);

  // Nothing declared: no images.
  NodeData bare;
  bare.name = "n2";
  const NodeModel bare_model(std::move(bare));
  const auto bare_copy = CompactNode::copy_of(bare_model.view());
  EXPECT_EQ(schedplug::Node(bare_copy->view()).image_count(), 0u);
}

// ABI v1.3 data: the pod's volumes, through the C helpers and the C++ views.
TEST(PodModel, ViewsTheVolumes) {
  PodData data;
  data.name = "p";
  data.volumes = {{"data", "persistentVolumeClaim", "web-data", true},
                  {"scratch", "ephemeral", "p-scratch", false},
                  {"config", "configMap", "", false}};
  const PodModel model(std::move(data));
  ASSERT_EQ(schedplug_pod_volume_count(&model.view()), 3u);
  EXPECT_EQ(str(schedplug_pod_volume(&model.view(), 1)->claim_name),
            "p-scratch");
  const schedplug::Pod pod(model.view());
  ASSERT_EQ(pod.volume_count(), 3u);
  EXPECT_EQ(pod.volume(0).name, "data");
  EXPECT_EQ(pod.volume(0).source, "persistentVolumeClaim");
  EXPECT_EQ(pod.volume(0).claim_name, "web-data");
  EXPECT_TRUE(pod.volume(0).read_only);
  EXPECT_EQ(pod.volume(1).source, "ephemeral");
  EXPECT_FALSE(pod.volume(1).read_only);
  EXPECT_EQ(pod.volume(2).claim_name, "");

  const PodModel bare(PodData{});
  EXPECT_EQ(schedplug::Pod(bare.view()).volume_count(), 0u);
}

// ABI v1.3 data: node affinity, topology spread and pod (anti-)affinity
// terms, through the C++ views (selectors sorted, unset ones absent).
TEST(PodModel, ViewsTheAffinityAndSpreadTerms) {
  PodData data;
  data.name = "p";
  data.node_affinity_required = {{0, {{"zone", "In", {"a", "b"}}}, {}},
                                 {0, {}, {{"metadata.name", "In", {"n1"}}}}};
  data.node_affinity_preferred = {{30, {{"gpu", "Exists", {}}}, {}}};
  data.topology_spread = {{1,
                           2,
                           "zone",
                           "DoNotSchedule",
                           {true, {{"tier", "front"}, {"app", "web"}}, {}},
                           "Honor",
                           "",
                           {"pod-template-hash"}}};
  data.pod_affinity[1] = {
      {10, "zone", {true, {}, {}}, {}, {false, {}, {}}, {}, {}}};
  data.pod_affinity[2] = {
      {0,
       "kubernetes.io/hostname",
       {true, {{"app", "web"}}, {{"tier", "NotIn", {"db"}}}},
       {"a", "b"},
       {true, {{"team", "x"}}, {}},
       {"hash"},
       {"tenant"}}};
  const PodModel model(std::move(data));
  const schedplug::Pod pod(model.view());

  ASSERT_EQ(pod.node_affinity_required().size(), 2u);
  const schedplug::NodeSelectorTerm first = pod.node_affinity_required()[0];
  EXPECT_EQ(first.weight(), 0);
  ASSERT_EQ(first.match_expressions().size(), 1u);
  EXPECT_EQ(first.match_expressions()[0].key, "zone");
  EXPECT_EQ(first.match_expressions()[0].op, "In");
  ASSERT_EQ(first.match_expressions()[0].values.size(), 2u);
  EXPECT_EQ(first.match_expressions()[0].values[1], "b");
  EXPECT_EQ(pod.node_affinity_required()[1].match_fields()[0].values[0], "n1");
  ASSERT_EQ(pod.node_affinity_preferred().size(), 1u);
  EXPECT_EQ(pod.node_affinity_preferred()[0].weight(), 30);
  EXPECT_TRUE(
      pod.node_affinity_preferred()[0].match_expressions()[0].values.empty());

  ASSERT_EQ(pod.topology_spread().size(), 1u);
  const schedplug::TopologySpreadConstraint c = pod.topology_spread()[0];
  EXPECT_EQ(c.max_skew(), 1);
  EXPECT_EQ(c.min_domains(), 2);
  EXPECT_EQ(c.topology_key(), "zone");
  EXPECT_EQ(c.when_unsatisfiable(), "DoNotSchedule");
  EXPECT_EQ(c.node_affinity_policy(), "Honor");
  EXPECT_EQ(c.node_taints_policy(), "");
  EXPECT_TRUE(c.label_selector().present());
  // Sorted, so a binary search finds both labels.
  EXPECT_EQ(c.label_selector().match_labels().get("app"), "web");
  EXPECT_EQ(c.label_selector().match_labels().get("tier"), "front");
  EXPECT_TRUE(c.match_label_keys().contains("pod-template-hash"));

  EXPECT_TRUE(pod.pod_affinity_required().empty());
  ASSERT_EQ(pod.pod_affinity_preferred().size(), 1u);
  const schedplug::PodAffinityTerm pref = pod.pod_affinity_preferred()[0];
  EXPECT_EQ(pref.weight(), 10);
  EXPECT_TRUE(pref.label_selector().present());  // empty: every pod
  EXPECT_TRUE(pref.label_selector().match_labels().empty());
  EXPECT_FALSE(pref.namespace_selector().present());  // unset
  ASSERT_EQ(pod.pod_anti_affinity_required().size(), 1u);
  const schedplug::PodAffinityTerm anti = pod.pod_anti_affinity_required()[0];
  EXPECT_EQ(anti.topology_key(), "kubernetes.io/hostname");
  EXPECT_EQ(anti.label_selector().match_labels().get("app"), "web");
  EXPECT_EQ(anti.label_selector().match_expressions()[0].op, "NotIn");
  EXPECT_EQ(anti.label_selector().match_expressions()[0].values[0], "db");
  EXPECT_EQ(anti.namespaces().size(), 2u);
  EXPECT_EQ(anti.namespace_selector().match_labels().get("team"), "x");
  EXPECT_EQ(anti.match_label_keys()[0], "hash");
  EXPECT_EQ(anti.mismatch_label_keys()[0], "tenant");
  EXPECT_TRUE(pod.pod_anti_affinity_preferred().empty());

  // Through the C helpers too.
  uint64_t n = 0;
  const schedplug_pod_affinity_term* terms = schedplug_pod_affinity(
      &model.view(), SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED, &n);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(
      schedplug_pod_affinity_term_at(&model.view(), terms, 0)->namespace_count,
      2u);

  // Nothing declared: every list empty.
  const PodModel bare(PodData{});
  const schedplug::Pod empty(bare.view());
  EXPECT_TRUE(empty.node_affinity_required().empty());
  EXPECT_TRUE(empty.node_affinity_preferred().empty());
  EXPECT_TRUE(empty.topology_spread().empty());
  EXPECT_TRUE(empty.pod_affinity_preferred().empty());
  EXPECT_TRUE(empty.pod_anti_affinity_required().empty());
}

TEST(NodeTable, FullTableThenDeltas) {
  NodeTable t;
  t.apply(full(1, {node(0, "a"), node(1, "b"), node(2, "c")}));
  EXPECT_EQ(t.version(), 1u);
  EXPECT_EQ(t.size(), 3u);
  ASSERT_EQ(t.views().size(), 3u);
  EXPECT_EQ(std::string(t.views()[1]->name.data, t.views()[1]->name.len), "b");
  EXPECT_EQ(t.find("c"), 2u);

  // Update b, remove a, add d at a fresh slot.
  t.apply(delta(1, 2, {node(1, "b", 7), node(3, "d")}, {0}));
  EXPECT_EQ(t.version(), 2u);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at(0), nullptr);
  EXPECT_EQ(t.views()[0], nullptr);
  EXPECT_EQ(t.generation(1), 7);
  EXPECT_FALSE(t.find("a").has_value());
  EXPECT_EQ(t.find("d"), 3u);

  // Reuse the freed slot; move d from slot 3 to slot 0.
  t.apply(delta(2, 3, {node(0, "d")}, {3}));
  EXPECT_EQ(name_at(t, 0), "d");
  EXPECT_EQ(t.find("d"), 0u);
  // Trailing empty slots are trimmed.
  EXPECT_EQ(t.slot_count(), 3u);
}

// names() is shared while only node updates come, renewed when a slot gains
// or loses its node, and what a caller holds never changes.
TEST(NodeTable, NamesBySlotAreSharedUntilASlotChangesHands) {
  NodeTable t;
  t.apply(full(1, {node(0, "a"), node(2, "c")}));
  const std::shared_ptr<const NodeNames> first = t.names();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(first->at(0), "a");
  EXPECT_EQ(first->at(1), "");
  EXPECT_EQ(first->at(2), "c");
  EXPECT_EQ(first->at(3), "");

  t.apply(delta(1, 2, {node(0, "a", 5)}));  // an update only
  EXPECT_EQ(t.names(), first);

  t.apply(delta(2, 3, {node(0, "z"), node(1, "b")}, {0}));
  const std::shared_ptr<const NodeNames> third = t.names();
  EXPECT_NE(third, first);
  EXPECT_EQ(third->at(0), "z");
  EXPECT_EQ(third->at(1), "b");
  EXPECT_EQ(first->at(0), "a");  // the earlier names are kept as they were

  t.apply(delta(3, 4, {}, {2}));
  EXPECT_EQ(t.names()->size(), 2u);  // trailing empty slot trimmed
  EXPECT_EQ(third->at(2), "c");
  t.apply(full(5, {node(0, "q")}));
  EXPECT_EQ(t.names()->at(0), "q");
  EXPECT_EQ(t.names()->size(), 1u);
}

TEST(NodeTable, FullDeltaReplacesEverything) {
  NodeTable t;
  t.apply(full(5, {node(0, "a"), node(1, "b")}));
  t.apply(full(9, {node(4, "x")}));
  EXPECT_EQ(t.version(), 9u);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.slot_count(), 5u);
  EXPECT_FALSE(t.find("a").has_value());
  EXPECT_EQ(name_at(t, 4), "x");
}

TEST(NodeTable, VersionMismatchAsksForResync) {
  NodeTable t;
  t.apply(full(3, {node(0, "a")}));
  expect_refused(t, delta(2, 4, {node(1, "b")}),
                 DeltaError::Kind::kVersionMismatch,
                 "send the full node table");
}

TEST(NodeTable, RefusesMalformedDeltasWithoutChangingAnything) {
  NodeTable t;
  t.apply(full(1, {node(0, "a"), node(1, "b")}));
  using K = DeltaError::Kind;
  expect_refused(t, delta(1, 2, {}, {7}), K::kInvalid, "holds no node");
  expect_refused(t, delta(1, 2, {}, {0, 0}), K::kInvalid, "twice");
  expect_refused(t, delta(1, 2, {node(2, "c"), node(3, "c")}), K::kInvalid,
                 "duplicate node name \"c\"");
  expect_refused(t, delta(1, 2, {node(2, "a")}), K::kInvalid,
                 "duplicate node name \"a\"");
  expect_refused(t, delta(1, 2, {node(1, "z")}), K::kInvalid,
                 "still holds node \"b\"");
  expect_refused(t, delta(1, 2, {node(2, "c"), node(2, "d")}), K::kInvalid,
                 "appears twice");
  expect_refused(t, delta(1, 2, {node(NodeTable::kMaxSlots, "big")}),
                 K::kInvalid, "dense small integers");
  // Beyond the table's size + upserts + headroom: refused, not allocated.
  expect_refused(t,
                 delta(1, 2, {node(2 + 1 + NodeTable::kSlotHeadroom, "far")}),
                 K::kInvalid, "is beyond the table");
  expect_refused(t, delta(1, 1, {node(2, "c")}), K::kInvalid,
                 "must be greater than base_version");
  expect_refused(t, delta(1, 2, {node(2, "")}), K::kInvalid, "has no name");
  // A valid delta mixed with an invalid part changes nothing either.
  expect_refused(t, delta(1, 2, {node(2, "c")}, {9}), K::kInvalid,
                 "holds no node");
  EXPECT_FALSE(t.find("c").has_value());
  EXPECT_EQ(name_at(t, 1), "b");
}

TEST(NodeTable, ReusingASlotRequiresRemovingIt) {
  NodeTable t;
  t.apply(full(1, {node(0, "a"), node(1, "b")}));
  t.apply(delta(1, 2, {node(1, "z")}, {1}));
  EXPECT_EQ(name_at(t, 1), "z");
  EXPECT_FALSE(t.find("b").has_value());
  // Swapping two names needs both slots removed.
  t.apply(delta(2, 3, {node(0, "z"), node(1, "a")}, {0, 1}));
  EXPECT_EQ(name_at(t, 0), "z");
  EXPECT_EQ(name_at(t, 1), "a");
  EXPECT_EQ(t.size(), 2u);
}

TEST(NodeTable, EmptyDeltas) {
  NodeTable t;
  t.apply(full(4, {node(0, "a")}));
  t.apply(delta(4, 0, {}));  // no new version: unchanged
  EXPECT_EQ(t.version(), 4u);
  t.apply(delta(4, 4, {}));
  EXPECT_EQ(t.version(), 4u);
  expect_refused(t, delta(4, 3, {}), DeltaError::Kind::kInvalid, "backwards");
  expect_refused(t, delta(3, 0, {}), DeltaError::Kind::kVersionMismatch,
                 "version mismatch");
}

TEST(NodeTable, EmptyFullTable) {
  NodeTable t;
  t.apply(full(1, {node(0, "a")}));
  t.apply(full(2, {}));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.slot_count(), 0u);
  EXPECT_EQ(t.version(), 2u);
}

}  // namespace
}  // namespace schedplug::host
