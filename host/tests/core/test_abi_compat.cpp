// ABI v1 grows append-only (plugin.h, "Versioning"): the layout of every
// v1.0 struct is unchanged, a plugin built against the frozen v1.0 header
// (sdk/tests/abi/v1.0) loads and behaves exactly like the same source built
// against today's header, and today's build still works on views of v1.0's
// size (an older host). abi_old_host (a CTest of its own) runs today's
// build in a host compiled against the v1.0 header.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "abi/abi_layout.h"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"
#include "schedplug/cpp/views.hpp"

namespace schedplug::host {
namespace {

std::filesystem::path abi_file(const std::string& stem) {
  return std::filesystem::path(SCHEDPLUG_ABI_DIR) / (stem + ".so");
}

std::map<std::string, unsigned long long> table(const abi_layout_entry* e) {
  std::map<std::string, unsigned long long> out;
  for (; e->what != nullptr; ++e) out[e->what] = e->value;
  return out;
}

TEST(AbiLayout, EveryV1_0FieldKeepsItsOffsetSizeAndValue) {
  const auto v1_0 = table(abi_layout_v1_0);
  const auto now = table(abi_layout_current);
  ASSERT_GT(v1_0.size(), 100u);
  ASSERT_EQ(v1_0.size(), now.size());
  for (const auto& [what, value] : v1_0) {
    ASSERT_TRUE(now.contains(what)) << what;
    EXPECT_EQ(now.at(what), value) << what << " changed since v1.0";
  }
}

TEST(AbiLayout, ViewsOnlyGrewAtTheEnd) {
  const auto v1_0 = table(abi_layout_v1_0);
  // The v1.1 fields start at or after the end of the last v1.0 field.
  EXPECT_GE(offsetof(schedplug_pod, kv_size),
            v1_0.at("schedplug_pod.toleration_count offset") + 8);
  EXPECT_GE(offsetof(schedplug_node, kv_size),
            v1_0.at("schedplug_node.pod_count offset") + 4);
  // v1.3's after v1.2's.
  EXPECT_GE(offsetof(schedplug_pod, volume_size),
            offsetof(schedplug_pod, port_size) + 4);
  EXPECT_GE(offsetof(schedplug_node, image_size),
            offsetof(schedplug_node, node_pod_size) + 4);
}

// A v1.3 plugin on a v1.2 host: the views end before the v1.3 fields (the
// bytes after them are 0xff here) and the helpers and C++ views read none.
TEST(AbiCompat, V1_3DataIsEmptyOnAV1_2View) {
  PodData data;
  data.volumes = {{"data", "persistentVolumeClaim", "pvc", false}};
  data.topology_spread = {TopologySpreadData{}};
  data.node_affinity_required = {NodeSelectorTermData{}};
  data.pod_affinity[2] = {PodAffinityTermData{}};
  const PodModel model(std::move(data));
  struct {
    schedplug_pod view;
  } pod;
  std::memset(&pod, 0xff, sizeof pod);
  std::memcpy(&pod.view, &model.view(), offsetof(schedplug_pod, volume_size));
  pod.view.struct_size = offsetof(schedplug_pod, volume_size);
  EXPECT_EQ(schedplug_pod_volume_count(&pod.view), 0u);
  EXPECT_EQ(schedplug_pod_topology_spread_count(&pod.view), 0u);
  uint64_t n = 7;
  EXPECT_EQ(schedplug_pod_node_affinity(&pod.view, 0, &n), nullptr);
  EXPECT_EQ(n, 0u);
  n = 7;
  EXPECT_EQ(schedplug_pod_affinity(&pod.view,
                                   SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED, &n),
            nullptr);
  EXPECT_EQ(n, 0u);
  const schedplug::Pod view(pod.view);
  EXPECT_EQ(view.volume_count(), 0u);
  EXPECT_TRUE(view.topology_spread().empty());
  EXPECT_TRUE(view.node_affinity_required().empty());
  EXPECT_TRUE(view.pod_anti_affinity_required().empty());
  // The full view has them.
  EXPECT_EQ(schedplug::Pod(model.view()).volume_count(), 1u);
  EXPECT_EQ(schedplug::Pod(model.view()).topology_spread().size(), 1u);

  NodeData node_data;
  node_data.name = "n";
  node_data.images = {{{"img:1"}, 1}};
  const NodeModel node_model(std::move(node_data));
  struct {
    schedplug_node view;
  } node;
  std::memset(&node, 0xff, sizeof node);
  std::memcpy(&node.view, &node_model.view(),
              offsetof(schedplug_node, image_size));
  node.view.struct_size = offsetof(schedplug_node, image_size);
  EXPECT_EQ(schedplug_node_image_count(&node.view), 0u);
  EXPECT_EQ(schedplug::Node(node.view).image_count(), 0u);
  EXPECT_EQ(schedplug::Node(node_model.view()).image_count(), 1u);
}

struct World {
  std::unique_ptr<PodModel> pod;
  std::vector<std::unique_ptr<NodeModel>> nodes;
};

std::unique_ptr<PodModel> make_pod(KeyValues labels, KeyValues annotations,
                                   int64_t cpu) {
  PodData d;
  d.namespace_name = "default";
  d.name = "p";
  d.labels = std::move(labels);
  d.annotations = std::move(annotations);
  d.requests = {{"cpu", cpu}};
  d.tolerations = {{"dedicated", "Exists", "", "", std::nullopt}};
  return std::make_unique<PodModel>(std::move(d));
}

std::unique_ptr<NodeModel> make_node(const std::string& name,
                                     const std::string& zone,
                                     int64_t allocatable, int64_t requested,
                                     std::vector<TaintData> taints,
                                     uint32_t pods) {
  NodeData d;
  d.name = name;
  d.labels = {{"zone", zone}, {"kubernetes.io/hostname", name}};
  d.allocatable = {{"cpu", allocatable}, {"memory", 1 << 30}};
  d.requested = {{"cpu", requested}};
  d.taints = std::move(taints);
  d.pod_count = pods;
  return std::make_unique<NodeModel>(std::move(d));
}

std::vector<std::unique_ptr<NodeModel>> nodes() {
  std::vector<std::unique_ptr<NodeModel>> out;
  out.push_back(
      make_node("fits", "a", 4000, 1000, {{"dedicated", "", "NoSchedule"}}, 3));
  out.push_back(make_node("roomy", "a", 8000, 0, {}, 0));
  out.push_back(make_node("elsewhere", "b", 4000, 0, {}, 1));
  out.push_back(
      make_node("tainted", "a", 4000, 0, {{"other", "x", "NoSchedule"}}, 1));
  out.push_back(make_node("soft-taint", "a", 4000, 0,
                          {{"other", "x", "PreferNoSchedule"}}, 2));
  out.push_back(make_node("full", "a", 1000, 800, {}, 5));
  return out;
}

// Everything a plugin's hooks answer for a set of pods on nodes(), as text,
// so two builds can be compared in one EXPECT_EQ.
std::vector<std::string> transcript(const std::string& stem,
                                    const std::string& args,
                                    bool v1_0_sized_views) {
  auto lib = load_plugin_file(abi_file(stem));
  auto plugin = PluginInstance::create(lib, args);
  std::vector<std::string> out;
  const auto& d = lib->descriptor();
  out.push_back("refresh_period_ms=" + std::to_string(d.refresh_period_ms) +
                " events=" + std::to_string(d.events) +
                " policy=" + std::to_string(d.normalize_policy));
  auto all = nodes();
  std::vector<std::unique_ptr<PodModel>> pods;
  pods.push_back(make_pod({{"zone", "a"}}, {}, 500));
  pods.push_back(make_pod({}, {}, 2500));
  pods.push_back(make_pod({{"zone", "b"}}, {}, 100));
  pods.push_back(make_pod({{"zone", "a"}}, {{"probe/skip", ""}}, 100));
  pods.push_back(make_pod({{"probe/fail-score", ""}}, {}, 100));

  // A view of v1.0's size, followed by bytes that would be absurd element
  // sizes if the plugin read them.
  struct PoisonedPod {
    schedplug_pod view;
    unsigned char poison[64];
  };
  struct PoisonedNode {
    schedplug_node view;
    unsigned char poison[64];
  };
  auto shrink_pod = [&](const schedplug_pod& in, PoisonedPod& buf) {
    std::memset(&buf, 0xff, sizeof buf);
    std::memcpy(&buf.view, &in, offsetof(schedplug_pod, kv_size));
    buf.view.struct_size = offsetof(schedplug_pod, kv_size);
  };
  auto shrink_node = [&](const schedplug_node& in, PoisonedNode& buf) {
    std::memset(&buf, 0xff, sizeof buf);
    std::memcpy(&buf.view, &in, offsetof(schedplug_node, kv_size));
    buf.view.struct_size = offsetof(schedplug_node, kv_size);
  };

  for (const auto& p : pods) {
    PoisonedPod small_pod;
    shrink_pod(p->view(), small_pod);
    const schedplug_pod& pod = v1_0_sized_views ? small_pod.view : p->view();
    std::string line = "applies=" + std::to_string(plugin->applies(pod));
    std::vector<schedplug_node_score> scores;
    for (const auto& n : all) {
      PoisonedNode small_node;
      shrink_node(n->view(), small_node);
      const schedplug_node& node =
          v1_0_sized_views ? small_node.view : n->view();
      Verdict v = plugin->filter(pod, node);
      line += " | " + n->data().name + ": filter " + std::to_string(v.code) +
              " " + v.reason;
      ScoreResult s = plugin->score(pod, node);
      line += "; score " + std::to_string(s.code) + " " +
              std::to_string(s.score) + " " + s.reason;
      if (s.code == SCHEDPLUG_SUCCESS) scores.push_back({node.name, s.score});
    }
    Verdict n = plugin->normalize(pod, scores);
    line += " | normalize " + std::to_string(n.code) + " " + n.reason;
    for (const auto& s : scores) line += " " + std::to_string(s.score);
    out.push_back(line);
  }
  for (int i = 0; i < 3; ++i) {
    Verdict r = plugin->refresh();
    out.push_back("refresh " + std::to_string(r.code) + " " + r.reason);
  }
  return out;
}

TEST(AbiCompat, V1_0BuildLoadsAndBehavesLikeTodaysBuild) {
  auto old_lib = load_plugin_file(abi_file("abi_probe_v1_0"));
  auto new_lib = load_plugin_file(abi_file("abi_probe_current"));
  EXPECT_EQ(old_lib->version(), "1.0.0");
  EXPECT_EQ(new_lib->version(), "1.1.0");
  EXPECT_LE(old_lib->descriptor().struct_size, sizeof(schedplug_plugin));
  for (const std::string args : {"{}", R"({"weight": 7})"}) {
    const auto v1_0 = transcript("abi_probe_v1_0", args, false);
    const auto now = transcript("abi_probe_current", args, false);
    EXPECT_EQ(v1_0, now) << "args " << args;
  }
}

TEST(AbiCompat, TranscriptHasTheExpectedAnswers) {
  // The comparison above is only worth something if the probe really
  // decides: spot-check the answers of the v1.0 build.
  const auto t = transcript("abi_probe_v1_0", "{}", false);
  ASSERT_EQ(t.size(), 9u);
  EXPECT_EQ(t[0], "refresh_period_ms=1500 events=9 policy=0");
  using ::testing::HasSubstr;
  EXPECT_THAT(t[1], HasSubstr("applies=1 | fits: filter 0 ; score 0 2505 "));
  EXPECT_THAT(t[1], HasSubstr("elsewhere: filter 2 node(s) in another zone"));
  EXPECT_THAT(t[1],
              HasSubstr("tainted: filter 3 node(s) had an untolerated taint"));
  EXPECT_THAT(t[1], HasSubstr("soft-taint: filter 0 "));
  EXPECT_THAT(t[1], HasSubstr("full: filter 2 node(s) lack cpu"));
  // "full" scores below 0, which the probe's normalize_score refuses.
  EXPECT_THAT(t[1], HasSubstr("full: filter 2 node(s) lack cpu; score 0 -293"));
  EXPECT_THAT(t[1], HasSubstr("normalize 1 plugin AbiProbe failed to "
                              "normalize scores: negative raw score"));
  EXPECT_THAT(t[4], HasSubstr("applies=0"));
  EXPECT_THAT(t[5], HasSubstr("score 1 0 plugin AbiProbe failed to score "
                              "node \"fits\": asked to fail"));
  EXPECT_EQ(t[6], "refresh 0 ");
  EXPECT_EQ(t[7],
            "refresh 1 plugin AbiProbe refresh failed: every second "
            "refresh fails");
}

TEST(AbiCompat, TodaysBuildWorksOnViewsOfV1_0Size) {
  // An older host sends views without the v1.1 element sizes; the bytes
  // after them are 0xff. The build against today's header must answer
  // exactly as on full-size views.
  EXPECT_EQ(transcript("abi_probe_current", "{}", true),
            transcript("abi_probe_current", "{}", false));
  EXPECT_EQ(transcript("abi_probe_v1_0", "{}", true),
            transcript("abi_probe_v1_0", "{}", false));
}

TEST(AbiCompat, HostViewsCarryElementSizes) {
  auto p = make_pod({}, {}, 1);
  EXPECT_EQ(p->view().struct_size, sizeof(schedplug_pod));
  EXPECT_EQ(p->view().kv_size, sizeof(schedplug_kv));
  EXPECT_EQ(p->view().resource_size, sizeof(schedplug_resource));
  EXPECT_EQ(p->view().toleration_size, sizeof(schedplug_toleration));
  EXPECT_EQ(p->view().node_score_size, sizeof(schedplug_node_score));
  EXPECT_EQ(p->view().volume_size, sizeof(schedplug_volume));
  EXPECT_EQ(p->view().requirement_size, sizeof(schedplug_selector_requirement));
  EXPECT_EQ(p->view().node_selector_term_size,
            sizeof(schedplug_node_selector_term));
  EXPECT_EQ(p->view().topology_spread_size,
            sizeof(schedplug_topology_spread_constraint));
  EXPECT_EQ(p->view().pod_affinity_term_size,
            sizeof(schedplug_pod_affinity_term));
  auto n = make_node("n", "a", 1, 0, {}, 0);
  EXPECT_EQ(n->view().kv_size, sizeof(schedplug_kv));
  EXPECT_EQ(n->view().resource_size, sizeof(schedplug_resource));
  EXPECT_EQ(n->view().taint_size, sizeof(schedplug_taint));
  EXPECT_EQ(n->view().image_size, sizeof(schedplug_node_image));
}

}  // namespace
}  // namespace schedplug::host
