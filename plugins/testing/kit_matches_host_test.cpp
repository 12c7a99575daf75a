// The SDK's test kit (schedplug/testing.hpp) gives the answers and messages
// schedplug-host's runtime gives, on the sample plugins: the kit is what
// authors test with, so it must not drift from the host.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"
#include "host/plugin/plugin_instance.hpp"
#include "schedplug/cpp/views.hpp"
#include "schedplug/testing.hpp"

namespace schedplug::testing {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<host::PluginInstance> host_plugin(const char* file,
                                                  const std::string& args) {
  return host::PluginInstance::create(host::load_plugin_file(file), args);
}

// One cycle through the host's runtime, in the kit's shape.
Cycle host_cycle(const host::PluginInstance& plugin, const Pod& pod,
                 const std::vector<Node>& nodes) {
  Cycle cycle;
  const host::PodScope scope = plugin.begin_pod(pod.view());
  if (!scope.error().empty()) {
    cycle.error = scope.error();
    return cycle;
  }
  const auto& d = plugin.library().descriptor();
  cycle.filter_skipped = !scope.runs_filter() || d.filter == nullptr;
  cycle.score_skipped = !scope.runs_score() || d.score == nullptr;
  std::vector<schedplug_node_score> scores;
  std::vector<size_t> rows;
  for (const Node& node : nodes) {
    NodeResult row;
    row.node = node.name();
    if (cycle.filter_skipped) {
      row.filter = Verdict{SCHEDPLUG_SKIP, {}};
    } else {
      const host::Verdict v = plugin.filter(scope.pod(), node.view());
      row.filter = Verdict{v.code, v.reason};
    }
    if (row.filter.code == SCHEDPLUG_ERROR && cycle.error.empty()) {
      cycle.error = row.filter.reason;
    }
    if ((row.filter.ok() || row.filter.code == SCHEDPLUG_SKIP) &&
        !cycle.score_skipped) {
      const host::ScoreResult s = plugin.score(scope.pod(), node.view());
      if (s.code != SCHEDPLUG_SUCCESS) {
        if (cycle.error.empty()) cycle.error = s.reason;
      } else {
        row.scored = true;
        row.raw = s.score;
        scores.push_back({node.view().name, s.score});
        rows.push_back(cycle.nodes.size());
      }
    }
    cycle.nodes.push_back(row);
  }
  if (cycle.error.empty() && !scores.empty()) {
    const host::Verdict v = plugin.normalize(scope.pod(), scores);
    if (!v.ok()) cycle.error = v.reason;
    for (size_t i = 0; v.ok() && i < scores.size(); ++i) {
      cycle.nodes[rows[i]].score = scores[i].score;
    }
  }
  return cycle;
}

void expect_same(const Cycle& kit, const Cycle& host) {
  EXPECT_EQ(kit.error, host.error);
  EXPECT_EQ(kit.filter_skipped, host.filter_skipped);
  EXPECT_EQ(kit.score_skipped, host.score_skipped);
  EXPECT_EQ(kit.table(), host.table());
}

TEST(KitMatchesHost, HwEncryptFilterTable) {
  const char* args = R"({"nodeLabel": "acme.io/tpm"})";
  auto kit = Plugin::load(HW_ENCRYPT_SO, args);
  auto host = host_plugin(HW_ENCRYPT_SO, args);
  const std::vector<Node> nodes = {Node("tpm").label("acme.io/tpm", "true"),
                                   Node("no-tpm").label("acme.io/tpm", "false"),
                                   Node("bare")};
  for (const Pod& pod :
       {Pod("wants").annotation("myorg.io/require-hw-encrypt", "true"),
        Pod("typo").annotation("myorg.io/require-hw-encrypt", "yes"),
        Pod("plain")}) {
    SCOPED_TRACE(pod.name());
    const Cycle cycle = kit->run(pod, nodes);
    expect_same(cycle, host_cycle(*host, pod, nodes));
  }
  const Cycle wants = kit->run(
      Pod("wants").annotation("myorg.io/require-hw-encrypt", "true"), nodes);
  EXPECT_EQ(wants.feasible(), std::vector<std::string>{"tpm"});
}

TEST(KitMatchesHost, NetworkLatencyScoresAndReverseNormalization) {
  const fs::path file = fs::temp_directory_path() /
                        ("kit_matches_host." + std::to_string(::getpid()));
  std::ofstream(file) << "near 2\nmid 11\nfar 20\nsame 11\n";
  const std::string args =
      R"({"latencyFile": ")" + file.string() + R"(", "defaultLatencyMs": 20})";
  auto kit = Plugin::load(NETWORK_LATENCY_SO, args);
  auto host = host_plugin(NETWORK_LATENCY_SO, args);
  ASSERT_TRUE(kit->refresh().ok());
  ASSERT_TRUE(host->refresh().ok());
  const std::vector<Node> nodes = {Node("near"), Node("mid"), Node("far"),
                                   Node("same"), Node("unknown")};
  const Pod pod("web");
  const Cycle cycle = kit->run(pod, nodes);
  expect_same(cycle, host_cycle(*host, pod, nodes));
  EXPECT_EQ(compare(cycle, {{"near", SCHEDPLUG_SKIP, "", 100},
                            {"mid", SCHEDPLUG_SKIP, "", 50},
                            {"far", SCHEDPLUG_SKIP, "", 0},
                            {"same", SCHEDPLUG_SKIP, "", 50},
                            {"unknown", SCHEDPLUG_SKIP, "", 0}}),
            "");
  fs::remove(file);
}

TEST(KitMatchesHost, CreateErrorsAreTheHostsMessages) {
  for (const char* args :
       {R"({"nodeLabl": "x"})", R"({"nodeLabel": 1})", R"([1])", "{"}) {
    std::string kit_error, host_error;
    try {
      Plugin::load(DEDICATED_NODES_SO, args);
    } catch (const Error& e) {
      kit_error = e.what();
    }
    try {
      host_plugin(DEDICATED_NODES_SO, args);
    } catch (const host::CreateError& e) {
      host_error = e.what();
    }
    EXPECT_FALSE(kit_error.empty()) << args;
    EXPECT_EQ(kit_error, host_error) << args;
  }
}

TEST(KitMatchesHost, LoadErrorsNameTheFileAndTheProblem) {
  try {
    Plugin::load("/nonexistent/plugin.so");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/plugin.so"),
              std::string::npos)
        << e.what();
  }
}

// The declared data (ABI v1.2) of a view, spelt out through the element
// sizes the view gives, as a plugin reads it.
std::string text(schedplug_str s) { return std::string(s.data, s.len); }
std::string text(schedplug_resource_list l, uint64_t size) {
  std::string out = "[";
  for (uint64_t i = 0; i < l.count; ++i) {
    const auto* r = reinterpret_cast<const schedplug_resource*>(
        reinterpret_cast<const char*>(l.items) + i * size);
    out += text(r->name) + "=" + std::to_string(r->value) + " ";
  }
  return out + "]";
}
std::string spelt_out(const schedplug_pod& p) {
  std::ostringstream out;
  out << text(p.node_name) << "|" << text(p.nominated_node_name) << "|"
      << text(p.priority_class_name) << "|";
  for (uint64_t i = 0; i < schedplug_pod_owner_count(&p); ++i) {
    const schedplug_owner* o = schedplug_pod_owner(&p, i);
    out << text(o->kind) << "/" << text(o->name) << "/" << o->controller << " ";
  }
  const uint64_t rs = schedplug_pod_resource_size(&p);
  for (uint64_t i = 0; i < schedplug_pod_container_count(&p); ++i) {
    const schedplug_container* c = schedplug_pod_container(&p, i);
    out << "|" << text(c->name) << " " << text(c->image) << " "
        << text(c->requests, rs) << text(c->limits, rs);
    for (uint64_t j = 0; j < c->port_count; ++j) {
      const schedplug_container_port* port =
          schedplug_container_port_at(&p, c, j);
      out << port->container_port << "/" << port->host_port << "/"
          << text(port->protocol) << "/" << text(port->host_ip) << " ";
    }
  }
  return out.str();
}
std::string spelt_out(const schedplug_node& n) {
  std::ostringstream out;
  const uint64_t rs = schedplug_node_resource_size(&n);
  out << n.pod_count << "|" << text(n.requested, rs) << "|"
      << schedplug_node_unschedulable(&n) << "|" << text(n.capacity, rs) << "|";
  for (uint64_t i = 0; i < schedplug_node_condition_count(&n); ++i) {
    const schedplug_node_condition* c = schedplug_node_condition_at(&n, i);
    out << text(c->type) << "=" << text(c->status) << " ";
  }
  for (uint64_t i = 0; i < schedplug_node_pod_list_count(&n); ++i) {
    const schedplug_node_pod* p = schedplug_node_pod_at(&n, i);
    out << "|" << text(p->namespace_name) << "/" << text(p->name) << " "
        << p->priority << " " << text(p->owner_kind) << " ";
    for (uint64_t j = 0; j < p->labels.count; ++j) {
      const auto* kv = reinterpret_cast<const schedplug_kv*>(
          reinterpret_cast<const char*>(p->labels.items) +
          j * schedplug_node_kv_size(&n));
      out << text(kv->key) << "=" << text(kv->value) << " ";
    }
    out << text(p->requests, rs);
  }
  return out.str();
}

// The kit's builders give the views the host builds from the same data
// (sent in any order): the pod list sorted by namespace then name, labels
// and resources by key, conditions, owners and containers as given.
TEST(KitMatchesHost, DeclaredDataViewsAreTheHosts) {
  const Pod kit_pod = Pod("web")
                          .node_name("n7")
                          .nominated_node_name("n2")
                          .priority_class_name("high")
                          .owner("ReplicaSet", "rs")
                          .owner("ConfigMap", "cfg", false)
                          .container(Container("app", "img:1")
                                         .request("memory", 1024)
                                         .request("cpu", 250)
                                         .limit("cpu", 500)
                                         .port({8080})
                                         .port({53, 5353, "UDP", "127.0.0.1"}))
                          .container(Container("side", "img:2"));
  host::PodData pd;
  pd.name = "web";
  pd.namespace_name = "default";
  pd.node_name = "n7";
  pd.nominated_node_name = "n2";
  pd.priority_class_name = "high";
  pd.owners = {{"ReplicaSet", "rs", true}, {"ConfigMap", "cfg", false}};
  pd.containers = {{"app",
                    "img:1",
                    {{"memory", 1024}, {"cpu", 250}},
                    {{"cpu", 500}},
                    {{8080, 0, "TCP", ""}, {53, 5353, "UDP", "127.0.0.1"}}},
                   {"side", "img:2", {}, {}, {}}};
  const host::PodModel host_pod(pd);
  EXPECT_EQ(spelt_out(kit_pod.view()), spelt_out(host_pod.view()));

  const Node kit_node =
      Node("n1")
          .unschedulable()
          .condition("Ready", "True")
          .condition("DiskPressure", "False")
          .capacity("memory", 8 << 20)
          .capacity("cpu", 4000)
          .pod(NodePod("web-1")
                   .label("tier", "front")
                   .label("app", "web")
                   .request("cpu", 100)
                   .owner_kind("ReplicaSet"))
          .pod(NodePod("db-0", "data").priority(1000).request("cpu", 250))
          .pod(NodePod("api").request("memory", 64));
  host::NodeData nd;
  nd.name = "n1";
  nd.unschedulable = true;
  nd.conditions = {{"Ready", "True"}, {"DiskPressure", "False"}};
  nd.capacity = {{"memory", 8 << 20}, {"cpu", 4000}};
  nd.pods = {{"default",
              "web-1",
              {{"tier", "front"}, {"app", "web"}},
              0,
              {{"cpu", 100}},
              "ReplicaSet"},
             {"data", "db-0", {}, 1000, {{"cpu", 250}}, ""},
             {"default", "api", {}, 0, {{"memory", 64}}, ""}};
  // What the shim sends with the list: its length, the sum of the requests.
  nd.pod_count = 3;
  nd.requested = {{"memory", 64}, {"cpu", 350}};
  const host::NodeModel host_node(nd);
  EXPECT_EQ(spelt_out(kit_node.view()), spelt_out(host_node.view()));
  EXPECT_EQ(spelt_out(kit_node.view()),
            "3|[cpu=350 memory=64 ]|1|[cpu=4000 memory=8388608 ]|Ready=True "
            "DiskPressure=False |data/db-0 1000  [cpu=250 ]|default/api 0  "
            "[memory=64 ]|default/web-1 0 ReplicaSet app=web tier=front "
            "[cpu=100 ]");
}

TEST(Kit, CompareReportsEveryDifferenceWithTheTable) {
  auto kit = Plugin::load(DEDICATED_NODES_SO);
  const Cycle cycle = kit->run(
      Pod("web"), {Node("open"),
                   Node("dedicated").label("schedplug.io/dedicated", "true")});
  EXPECT_EQ(
      compare(cycle, {{"open"},
                      {"dedicated", SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
                       "node(s) were dedicated (schedplug.io/dedicated=true) "
                       "and the pod lacks annotation "
                       "schedplug.io/dedicated-ok=true"}}),
      "");
  const std::string diff =
      compare(cycle, {{"open", SCHEDPLUG_SUCCESS, "", 100}, {"dedicated"}});
  EXPECT_NE(diff.find("open: expected score 100, got -"), std::string::npos)
      << diff;
  EXPECT_NE(diff.find("dedicated: expected filter Success \"\", got "
                      "UnschedulableAndUnresolvable"),
            std::string::npos)
      << diff;
  EXPECT_NE(diff.find("the cycle:\nopen  Success  score=-"), std::string::npos)
      << diff;
  EXPECT_NE(
      compare(cycle, {{"open"}}).find("expected 1 nodes, the cycle has 2"),
      std::string::npos);
}

// The kit's builders for ABI v1.3 data fill the views the way the host
// does; copies keep their own data.
TEST(Kit, BuildsVolumesAndImages) {
  Pod pod("p");
  pod.volume("data", "persistentVolumeClaim", "pvc-1", true)
      .volume("scratch", "ephemeral", "p-scratch");
  const Pod copy = pod;
  pod.volume("config", "configMap");
  const schedplug::Pod view(copy.view());
  ASSERT_EQ(view.volume_count(), 2u);
  EXPECT_EQ(view.volume(0).claim_name, "pvc-1");
  EXPECT_TRUE(view.volume(0).read_only);
  EXPECT_EQ(view.volume(1).source, "ephemeral");
  EXPECT_EQ(schedplug::Pod(pod.view()).volume(2).name, "config");

  Node node("n1");
  node.image({"registry.example/app@sha256:01", "registry.example/app:1"}, 1000)
      .image({"registry.k8s.io/pause:3.10"});
  const Node node_copy = node;
  const schedplug::Node n(node_copy.view());
  ASSERT_EQ(n.image_count(), 2u);
  EXPECT_EQ(n.image(0).name(1), "registry.example/app:1");
  EXPECT_EQ(n.image(0).size_bytes(), 1000);
  EXPECT_TRUE(n.image(1).has_name("registry.k8s.io/pause:3.10"));
  EXPECT_EQ(schedplug::Node(Node("bare").view()).image_count(), 0u);
}

TEST(Kit, BuildsAffinityAndSpreadTerms) {
  SpreadConstraint spread;
  spread.topology_key = "zone";
  spread.label_selector = Selector{{{"app", "web"}}, {}};
  spread.min_domains = 2;
  AffinityTerm anti;
  anti.topology_key = "kubernetes.io/hostname";
  anti.label_selector = Selector{{}, {{"app", "In", {"web"}}}};
  anti.namespaces = {"a"};
  AffinityTerm zone;
  zone.topology_key = "zone";
  Pod pod("p");
  pod.node_affinity_required({{{"zone", "In", {"a", "b"}}}, {}})
      .node_affinity_preferred(30, {{{"gpu", "Exists", {}}}, {}})
      .topology_spread(spread)
      .pod_anti_affinity_required(anti)
      .pod_affinity_preferred(10, zone);
  const Pod copy = pod;  // views rebuilt over the copy's own data
  const schedplug::Pod view(copy.view());
  ASSERT_EQ(view.node_affinity_required().size(), 1u);
  EXPECT_EQ(view.node_affinity_required()[0].match_expressions()[0].values[1],
            "b");
  EXPECT_EQ(view.node_affinity_preferred()[0].weight(), 30);
  ASSERT_EQ(view.topology_spread().size(), 1u);
  EXPECT_EQ(view.topology_spread()[0].when_unsatisfiable(), "DoNotSchedule");
  EXPECT_EQ(view.topology_spread()[0].min_domains(), 2);
  EXPECT_EQ(
      view.topology_spread()[0].label_selector().match_labels().get("app"),
      "web");
  ASSERT_EQ(view.pod_anti_affinity_required().size(), 1u);
  const schedplug::PodAffinityTerm term = view.pod_anti_affinity_required()[0];
  EXPECT_EQ(term.label_selector().match_expressions()[0].values[0], "web");
  EXPECT_FALSE(term.namespace_selector().present());
  EXPECT_EQ(term.namespaces()[0], "a");
  EXPECT_EQ(view.pod_affinity_preferred()[0].weight(), 10);
  EXPECT_FALSE(view.pod_affinity_preferred()[0].label_selector().present());
  EXPECT_TRUE(view.pod_affinity_required().empty());
}

}  // namespace
}  // namespace schedplug::testing
