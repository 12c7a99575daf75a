// `schedplug simulate`: the dump reader (quantities, effective requests,
// messages on bad dumps) directly, and the command through the built
// binary with test plugins (placements, ties, load, explain, exit codes).
// One file: the reader's cases and the command's check the same conversions,
// once directly and once in the placements they lead to.
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/schedplug/kube_dump.hpp"

namespace {

using schedplug::tools::DumpError;
using schedplug::tools::parse_node_dump;
using schedplug::tools::parse_pod_dump;
using schedplug::tools::parse_quantity;
using schedplug::tools::quantity_milli_value;
using schedplug::tools::quantity_value;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// ---------------------------------------------------------------- quantities

int64_t value(const char* q) {
  auto v = parse_quantity(q);
  EXPECT_TRUE(v.has_value()) << q;
  return v ? quantity_value(*v) : -1;
}
int64_t milli(const char* q) {
  auto v = parse_quantity(q);
  EXPECT_TRUE(v.has_value()) << q;
  return v ? quantity_milli_value(*v) : -1;
}

TEST(Quantity, ParsesEverySuffixLikeKubernetes) {
  EXPECT_EQ(milli("500m"), 500);
  EXPECT_EQ(milli("2"), 2000);
  EXPECT_EQ(milli("0.1"), 100);
  EXPECT_EQ(milli("1.5"), 1500);
  EXPECT_EQ(value("1Ki"), 1024);
  EXPECT_EQ(value("1.5Gi"), 1610612736);
  EXPECT_EQ(value("32Gi"), 34359738368);
  EXPECT_EQ(value("1k"), 1000);
  EXPECT_EQ(value("1M"), 1000000);
  EXPECT_EQ(value("2G"), 2000000000);
  EXPECT_EQ(value("1e3"), 1000);
  EXPECT_EQ(value("1E3"), 1000);
  EXPECT_EQ(value("1E"), 1000000000000000000);
  EXPECT_EQ(value("110"), 110);
  EXPECT_EQ(value("+5"), 5);
  EXPECT_EQ(milli("100u"), 1);  // rounded up, as Quantity.MilliValue()
  EXPECT_EQ(value("100m"), 1);  // rounded up, as Quantity.Value()
  EXPECT_EQ(milli("1n"), 1);
  EXPECT_EQ(value("0"), 0);
}

TEST(Quantity, RefusesWhatKubernetesRefuses) {
  for (const char* bad : {"", "abc", "1KB", "1K", "m", "1.2.3", "1e", "1 Gi",
                          "1Gii", "--1", "1e99"}) {
    EXPECT_FALSE(parse_quantity(bad).has_value()) << bad;
  }
}

// ---------------------------------------------------------------- dumps

std::vector<std::pair<std::string, int64_t>> sorted(
    std::vector<std::pair<std::string, int64_t>> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(PodDump, EffectiveRequestsFollowKubeScheduler) {
  // containers 200m + 300m = 500m; the sidecar (restartPolicy Always)
  // runs beside them (600m) and beside the init container after it
  // (800m + 100m = 900m); the larger wins, plus 50m overhead.
  const auto pods = parse_pod_dump(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, uid: u-1, labels: {app: x}}
spec:
  priority: 7
  nodeSelector: {zone: a}
  tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 30}]
  overhead: {cpu: 50m}
  initContainers:
    - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 1Mi}}}
    - {name: init, resources: {requests: {cpu: 800m, example.com/gpu: "1"}}}
  containers:
    - {name: a, resources: {requests: {cpu: 200m, memory: 1Gi}}}
    - {name: b, resources: {requests: {cpu: 300m, memory: 1Gi}}}
)",
                                   "pods.yaml");
  ASSERT_EQ(pods.size(), 1u);
  const auto& p = pods[0];
  EXPECT_EQ(p.key(), "ns/p");
  EXPECT_EQ(p.data.uid, "u-1");
  EXPECT_EQ(p.data.priority, 7);
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_TRUE(p.node_name.empty());
  EXPECT_THAT(
      sorted(p.data.requests),
      ElementsAre(Pair("cpu", 950), Pair("example.com/gpu", 1),
                  Pair("memory", 2147483648 + 1048576), Pair("pods", 1)));
  EXPECT_THAT(p.node_requests,
              ElementsAre(Pair("cpu", 950), Pair("example.com/gpu", 1),
                          Pair("memory", 2147483648 + 1048576)));
  ASSERT_EQ(p.data.tolerations.size(), 1u);
  EXPECT_EQ(p.data.tolerations[0].op, "Equal");
  EXPECT_EQ(p.data.tolerations[0].toleration_seconds, 30);
  EXPECT_THAT(p.data.node_selector, ElementsAre(Pair("zone", "a")));
}

TEST(PodDump, PodLevelRequestsWinForCpuAndMemory) {
  const auto pods = parse_pod_dump(R"(
apiVersion: v1
kind: PodList
items:
  - metadata: {name: p}
    spec:
      resources: {requests: {cpu: "2"}}
      containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Ki}}}]
    status: {phase: Pending}
)",
                                   "pods.yaml");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].key(), "default/p");
  EXPECT_THAT(
      sorted(pods[0].data.requests),
      ElementsAre(Pair("cpu", 2000), Pair("memory", 1024), Pair("pods", 1)));
}

TEST(NodeDump, ListsAndDocumentsGiveTheNodeInfoView) {
  const auto nodes = parse_node_dump(R"(
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata: {name: a, labels: {x: "1"}, annotations: {y: "2"}}
    spec: {taints: [{key: t, value: v, effect: NoSchedule}]}
    status:
      allocatable: {cpu: 3900m, memory: 16Gi, pods: "110", ephemeral-storage: 10G,
                    example.com/gpu: "2", hugepages-2Mi: "0", weird: "5"}
---
apiVersion: v1
kind: Node
metadata: {name: b}
---
)",
                                     "nodes.yaml");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].data.name, "a");
  // cpu, memory, ephemeral-storage, pods, then scalars; "weird" is not a
  // resource NodeInfo tracks.
  EXPECT_THAT(
      nodes[0].data.allocatable,
      ElementsAre(Pair("cpu", 3900), Pair("memory", 17179869184),
                  Pair("ephemeral-storage", 10000000000), Pair("pods", 110),
                  Pair("example.com/gpu", 2), Pair("hugepages-2Mi", 0)));
  ASSERT_EQ(nodes[0].data.taints.size(), 1u);
  EXPECT_EQ(nodes[0].data.taints[0].effect, "NoSchedule");
  EXPECT_EQ(nodes[1].data.name, "b");
  EXPECT_EQ(nodes[1].where, "nodes.yaml: document 2 (Node \"b\")");
}

TEST(Dumps, ReadTheDataAPluginMayDeclareAsTheShimConvertsIt) {
  // wire/convert.go's fields beyond the v1.1 views (plugin.h's
  // SCHEDPLUG_DATA_*), for simulate --native-only.
  const auto nodes = parse_node_dump(R"(
kind: Node
metadata: {name: a}
spec: {unschedulable: true}
status:
  capacity: {memory: 1Gi, cpu: "4"}
  conditions: [{type: Ready, status: "True"}, {type: DiskPressure, status: "False"}]
  images: [{names: ["img:1", "img@sha256:0"], sizeBytes: 1000}]
)",
                                     "nodes.yaml");
  ASSERT_EQ(nodes.size(), 1u);
  const auto& n = nodes[0].data;
  EXPECT_TRUE(n.unschedulable);
  EXPECT_THAT(n.capacity,
              ElementsAre(Pair("cpu", 4000), Pair("memory", 1073741824)));
  EXPECT_THAT(n.conditions, ElementsAre(Pair("Ready", "True"),
                                        Pair("DiskPressure", "False")));
  ASSERT_EQ(n.images.size(), 1u);
  EXPECT_THAT(n.images[0].names, ElementsAre("img:1", "img@sha256:0"));
  EXPECT_EQ(n.images[0].size_bytes, 1000);
  EXPECT_TRUE(n.pods.empty());

  const auto pods = parse_pod_dump(R"(
kind: Pod
metadata:
  name: p
  ownerReferences:
    - {kind: ReplicaSet, name: rs, controller: true}
    - {kind: Thing, name: t}
spec:
  nodeName: n1
  priorityClassName: high
  containers:
    - name: c
      image: img:1
      resources: {requests: {cpu: 250m}, limits: {cpu: 500m, memory: 1Mi}}
      ports: [{containerPort: 8080, protocol: TCP, hostPort: 9090, hostIP: 1.2.3.4}]
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: pvc-1, readOnly: true}}
    - {name: scratch, ephemeral: {volumeClaimTemplate: {spec: {}}}}
    - {name: cfg, configMap: {name: c}}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
      preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 30, preference: {matchFields: [{key: metadata.name, operator: In, values: [n1]}]}}
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 10
          podAffinityTerm: {topologyKey: zone, labelSelector: {}}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: web}}
          namespaces: [a, b]
          matchLabelKeys: [hash]
  topologySpreadConstraints:
    - {maxSkew: 1, minDomains: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
       nodeAffinityPolicy: Honor, labelSelector: {matchExpressions: [{key: app, operator: Exists}]}}
status: {nominatedNodeName: n2}
)",
                                   "pods.yaml");
  ASSERT_EQ(pods.size(), 1u);
  const auto& p = pods[0];
  const auto& d = p.data;
  EXPECT_EQ(d.node_name, "n1");
  EXPECT_EQ(d.nominated_node_name, "n2");
  EXPECT_EQ(d.priority_class_name, "high");
  ASSERT_EQ(d.owners.size(), 2u);
  EXPECT_TRUE(d.owners[0].controller);
  EXPECT_FALSE(d.owners[1].controller);
  EXPECT_EQ(p.owner_kind, "ReplicaSet");
  ASSERT_EQ(d.containers.size(), 1u);
  EXPECT_EQ(d.containers[0].image, "img:1");
  EXPECT_THAT(d.containers[0].requests, ElementsAre(Pair("cpu", 250)));
  EXPECT_THAT(d.containers[0].limits,
              ElementsAre(Pair("cpu", 500), Pair("memory", 1048576)));
  ASSERT_EQ(d.containers[0].ports.size(), 1u);
  EXPECT_EQ(d.containers[0].ports[0].container_port, 8080);
  EXPECT_EQ(d.containers[0].ports[0].host_port, 9090);
  EXPECT_EQ(d.containers[0].ports[0].host_ip, "1.2.3.4");
  ASSERT_EQ(d.volumes.size(), 3u);
  EXPECT_EQ(d.volumes[0].source, "persistentVolumeClaim");
  EXPECT_EQ(d.volumes[0].claim_name, "pvc-1");
  EXPECT_TRUE(d.volumes[0].read_only);
  EXPECT_EQ(d.volumes[1].claim_name, "p-scratch");
  EXPECT_EQ(d.volumes[2].source, "configMap");
  EXPECT_EQ(d.volumes[2].claim_name, "");
  ASSERT_EQ(d.node_affinity_required.size(), 1u);
  EXPECT_THAT(d.node_affinity_required[0].match_expressions[0].values,
              ElementsAre("a", "b"));
  ASSERT_EQ(d.node_affinity_preferred.size(), 1u);
  EXPECT_EQ(d.node_affinity_preferred[0].weight, 30);
  EXPECT_EQ(d.node_affinity_preferred[0].match_fields[0].key, "metadata.name");
  ASSERT_EQ(d.topology_spread.size(), 1u);
  EXPECT_EQ(d.topology_spread[0].min_domains, 2);
  EXPECT_EQ(d.topology_spread[0].node_affinity_policy, "Honor");
  EXPECT_EQ(d.topology_spread[0].node_taints_policy, "");
  EXPECT_TRUE(d.topology_spread[0].label_selector.present);
  EXPECT_EQ(d.topology_spread[0].label_selector.match_expressions[0].op,
            "Exists");
  EXPECT_TRUE(d.pod_affinity[0].empty());
  ASSERT_EQ(d.pod_affinity[1].size(), 1u);
  EXPECT_EQ(d.pod_affinity[1][0].weight, 10);
  EXPECT_TRUE(d.pod_affinity[1][0].label_selector.present);
  EXPECT_FALSE(d.pod_affinity[1][0].namespace_selector.present);
  ASSERT_EQ(d.pod_affinity[2].size(), 1u);
  EXPECT_THAT(d.pod_affinity[2][0].label_selector.match_labels,
              ElementsAre(Pair("app", "web")));
  EXPECT_THAT(d.pod_affinity[2][0].namespaces, ElementsAre("a", "b"));
  EXPECT_THAT(d.pod_affinity[2][0].match_label_keys, ElementsAre("hash"));
  EXPECT_TRUE(d.pod_affinity[3].empty());
}

std::string dump_error(const std::string& yaml, bool nodes) {
  try {
    if (nodes) {
      parse_node_dump(yaml, "dump.yaml");
    } else {
      parse_pod_dump(yaml, "dump.yaml");
    }
  } catch (const DumpError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Dumps, MessagesNameFileDocumentItemFieldAndLine) {
  EXPECT_EQ(dump_error(R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: ok}
- kind: Node
  metadata: {name: n-1}
  status:
    allocatable:
      cpu: four
)",
                       true),
            "dump.yaml: document 1, items[1] (Node \"n-1\"): field "
            "status.allocatable.cpu (line 10): \"four\" is not a Kubernetes "
            "quantity (such as 500m, 2, 1.5Gi or 1e3)");
  EXPECT_THAT(dump_error("kind: Node\nmetadata: {name: a}\n---\nkind: Pod\n"
                         "metadata: {name: p}\n",
                         true),
              AllOf(HasSubstr("dump.yaml: document 2: field kind (line 4): "
                              "is \"Pod\""),
                    HasSubstr("kubectl get nodes -o yaml")));
  EXPECT_THAT(dump_error("kind: Pod\nmetadata: {name: p}\nspec:\n  "
                         "containers: {a: b}\n",
                         false),
              HasSubstr("dump.yaml: document 1 (Pod \"p\"): field "
                        "spec.containers (line 4): must be a list"));
  EXPECT_THAT(dump_error("kind: Pod\nmetadata: {namespace: x}\n", false),
              HasSubstr("field metadata.name (line 2): is missing"));
  EXPECT_THAT(dump_error("kind: Pod\nmetadata: {name: p}\n---\nkind: Pod\n"
                         "metadata: {name: p}\n",
                         false),
              HasSubstr("the pod \"default/p\" appears twice"));
  EXPECT_THAT(dump_error("kind: [\n", true),
              AllOf(HasSubstr("dump.yaml: not valid YAML at line"),
                    HasSubstr("kubectl get nodes -o yaml")));
  EXPECT_THAT(dump_error("kind: Pod\nmetadata: {name: p}\nspec: {priority: "
                         "high}\n",
                         false),
              HasSubstr("field spec.priority (line 3): must be an integer "
                        "(is \"high\")"));
}

// ---------------------------------------------------------------- the CLI

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/simulate-" +
                           std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

Outcome schedplug(const std::string& args) {
  const std::string base =
      ::testing::TempDir() + "/schedplug-sim-" + std::to_string(::getpid());
  const std::string out = base + ".out";
  const std::string err = base + ".err";
  const std::string cmd = std::string("'") + SCHEDPLUG_BIN + "' " + args +
                          " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string config(const std::string& name) {
  return std::string(SCHEDPLUG_FIXTURES) + "/simulate/" + name;
}
std::string sim_dir() { return std::string(SCHEDPLUG_PLUGIN_DIRS) + "/sim.d"; }

std::string node(const std::string& name, const std::string& cpu,
                 const std::string& labels = "{}") {
  return "- apiVersion: v1\n  kind: Node\n  metadata: {name: " + name +
         ", labels: " + labels + "}\n  status:\n    allocatable: {cpu: \"" +
         cpu + "\", memory: 8Gi, pods: \"110\"}\n";
}
std::string node_list(const std::string& items) {
  return "apiVersion: v1\nkind: List\nitems:\n" + items;
}
std::string pod(const std::string& name, const std::string& cpu,
                const std::string& extra_spec = "",
                const std::string& extra_meta = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n" + extra_meta + "spec:\n" + extra_spec +
         "  containers:\n  - name: c\n    image: x\n    resources: "
         "{requests: {cpu: \"" +
         cpu + "\"}}\n";
}

Outcome simulate(const std::string& cfg, const std::string& nodes,
                 const std::string& pods, const std::string& more = "") {
  return schedplug("simulate --native-only --config " + config(cfg) +
                   " --plugins " + sim_dir() + " --nodes " +
                   temp_file("nodes.yaml", nodes) + " --pods " +
                   temp_file("pods.yaml", pods) + " " + more);
}

TEST(SimulateCli, TiesAreReportedAndPlacedPodsCountForLaterOnes) {
  // GoodScorer: fewest pods -> 100; GoodFilter rejects n3.
  const Outcome r = simulate(
      "spread.yaml",
      node_list(node("n1", "4") + node("n2", "4") +
                node("n3", "4", "{corpus/reject: \"x\"}") + node("n4", "4")),
      pod("p1", "1") + pod("p2", "1") + pod("p3", "1"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("default/p1  tie: n1, n2, n4  (score 100; 3 "
                              "nodes tie, simulation goes on with n1)"),
                    HasSubstr("default/p2  tie: n2, n4  (score 100; 2 nodes "
                              "tie, simulation goes on with n2)"),
                    HasSubstr("default/p3  n4  (score 100)\n"),
                    HasSubstr("3 pods to schedule: 3 placed (2 ties), 0 "
                              "unschedulable, 0 errors")));
}

TEST(SimulateCli, BoundPodsAreLoadAndFinishedOnesAreNot) {
  const std::string bound = pod("old", "1", "  nodeName: n1\n") +
                            pod("done", "1", "  nodeName: n2\n") +
                            "status: {phase: Succeeded}\n";
  const Outcome r =
      simulate("spread.yaml", node_list(node("n1", "4") + node("n2", "4")),
               bound + pod("p1", "1"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("1 bound (load on their nodes), 1 to "
                                     "schedule, 1 finished"),
                           HasSubstr("default/p1  n2  (score 100)")));
}

TEST(SimulateCli, HigherPriorityGoesFirstAndUnschedulableExitsOne) {
  // Each pod needs 1.5 cpu; only n1 (2 cpu) fits one, and the pod with the
  // higher priority (listed second) gets it.
  const Outcome r =
      simulate("cpu.yaml", node_list(node("n1", "2") + node("n2", "1")),
               pod("low", "1500m") + pod("high", "1500m", "  priority: 100\n"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("default/high  n1  (the only feasible node)"),
                    HasSubstr("default/low   unschedulable: 0/2 nodes are "
                              "available: 2 Insufficient free cpu."),
                    HasSubstr("1 placed (0 ties), 1 unschedulable")));
  // "high" is listed first: it was scheduled first.
  EXPECT_LT(r.out.find("default/high"), r.out.find("default/low"));
}

TEST(SimulateCli, ExplainJsonGivesEveryVerdictAndRawAndNormalizedScore) {
  // n1 carries a bound pod of 950m (see EffectiveRequests above).
  const std::string bound = R"(---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: default}
spec:
  nodeName: n1
  overhead: {cpu: 50m}
  initContainers:
    - {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 100m}}}
    - {name: init, resources: {requests: {cpu: 800m}}}
  containers:
    - {name: a, resources: {requests: {cpu: 200m}}}
    - {name: b, resources: {requests: {cpu: 300m}}}
)";
  const Outcome r = simulate(
      "cpu.yaml",
      node_list(node("n1", "4") + node("n2", "2") + node("n3", "250m")),
      bound + pod("web", "500m"), "--json --explain default/web");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 3);
  EXPECT_EQ(j["bound_pods"], 1);
  EXPECT_EQ(j["profiles"][0]["scores"][0]["weight"], 3);
  ASSERT_EQ(j["pods"].size(), 1u);
  const auto& p = j["pods"][0];
  EXPECT_EQ(p["status"], "placed");
  EXPECT_EQ(p["node"], "n1");
  EXPECT_EQ(p["score"], 300);
  EXPECT_EQ(p["feasible_nodes"], 2);
  const auto& ex = p["explain"];
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[0]["node"], "n1");
  EXPECT_EQ(ex[0]["filters"][0]["verdict"], "Success");
  EXPECT_EQ(ex[0]["scores"][0]["raw"], 4000 - 950 - 500);
  EXPECT_EQ(ex[0]["scores"][0]["normalized"], 100);
  EXPECT_EQ(ex[0]["scores"][0]["weighted"], 300);
  EXPECT_EQ(ex[0]["total"], 300);
  EXPECT_EQ(ex[1]["scores"][0]["raw"], 2000 - 500);
  EXPECT_EQ(ex[1]["scores"][0]["normalized"], 0);
  EXPECT_EQ(ex[2]["feasible"], false);
  EXPECT_EQ(ex[2]["filters"][0]["verdict"], "Unschedulable");
  EXPECT_EQ(ex[2]["filters"][0]["reason"], "Insufficient free cpu");
  EXPECT_FALSE(ex[2].contains("scores"));
}

TEST(SimulateCli, NativeOnlyGivesAPluginTheNodesPodsItDeclares) {
  // PodsOnNode declares SCHEDPLUG_DATA_NODE_PODS and scores a node by the
  // pods on it of the pod's app: n2 runs one of app web's pods, so web-1
  // goes there, and web-2 after it finds two.
  const std::string bound =
      pod("db-0", "1", "  nodeName: n1\n", "  labels: {app: db}\n") +
      pod("web-0", "1", "  nodeName: n2\n", "  labels: {app: web}\n");
  const std::string pending = pod("web-1", "1", "", "  labels: {app: web}\n") +
                              pod("web-2", "1", "", "  labels: {app: web}\n");
  const std::string nodes =
      node_list(node("n1", "4") + node("n2", "4") + node("n3", "4"));
  const Outcome text = simulate("pods_on_node.yaml", nodes, bound + pending,
                                "--explain default/web-2");
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_THAT(
      text.out,
      AllOf(HasSubstr("default/web-1  n2  (score 200)\n"),
            HasSubstr("default/web-2  n2  (score 200)\n"),
            HasSubstr("    n1  total 0\n"
                      "      PodsOnNode  score   raw 0, normalized 0, "
                      "weight 2 -> 0\n"),
            HasSubstr("    n2  total 200  <- chosen\n"
                      "      PodsOnNode  score   raw 2, normalized 100, "
                      "weight 2 -> 200\n")));

  const Outcome json = simulate("pods_on_node.yaml", nodes, bound + pending,
                                "--json --explain default/web-1");
  ASSERT_EQ(json.exit_code, 0) << json.out << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto& ex = j["pods"][0]["explain"];
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[1]["node"], "n2");
  EXPECT_EQ(ex[1]["scores"][0]["raw"], 1);
  EXPECT_EQ(ex[1]["scores"][0]["normalized"], 100);
  EXPECT_EQ(ex[0]["scores"][0]["raw"], 0);
  EXPECT_EQ(ex[0]["scores"][0]["normalized"], 0);
}

TEST(SimulateCli, ExplainTextShowsSkippedPlugins) {
  const Outcome r =
      simulate("cpu.yaml", node_list(node("n1", "1") + node("n2", "1")),
               pod("quiet", "5", "", "  labels: {sim/ignore: \"yes\"}\n"),
               "--explain quiet");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("default/quiet  tie: n1, n2  (score 0;"),
                    HasSubstr("explain default/quiet (profile "
                              "\"default-scheduler\", 2 of 2 nodes feasible)"),
                    HasSubstr("    n1  total 0  <- chosen\n"),
                    HasSubstr("    n2  total 0  <- tied\n"),
                    HasSubstr("FreeCpu  filter  skipped for this pod "
                              "(applies() or PreFilter said so)"),
                    HasSubstr("FreeCpu  score   skipped")));
}

TEST(SimulateCli, AFilterErrorIsAnErrorNotAPlacement) {
  const Outcome r =
      schedplug("simulate --native-only --config " + config("throws.yaml") +
                " --plugins " + std::string(SCHEDPLUG_PLUGIN_DIRS) +
                "/throws.d --nodes " +
                temp_file("nodes.yaml", node_list(node("n1", "1"))) +
                " --pods " + temp_file("pods.yaml", pod("p", "1")));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("default/p  error: plugin \"HookThrows\" "
                                     "returned Error on node \"n1\""),
                           HasSubstr("boom in filter"),
                           HasSubstr("0 placed (0 ties), 0 unschedulable, 1 "
                                     "error")));
}

TEST(SimulateCli, BadInputExitsTwoWithActionableMessages) {
  const std::string nodes = node_list(node("n1", "1"));
  Outcome r =
      simulate("cpu.yaml", node_list(node("n1", "lots")), pod("p", "1"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("nodes.yaml: document 1, items[0] (Node "
                                     "\"n1\"): field status.allocatable.cpu "
                                     "(line 8): \"lots\" is not a Kubernetes "
                                     "quantity")));
  r = simulate("cpu.yaml", pod("p", "1"), pod("q", "1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("field kind (line 3): is \"Pod\"; this file "
                               "must hold Node objects"));
  r = simulate("cpu.yaml", nodes, pod("p", "1"), "--explain nobody");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--explain nobody: no pod of that name in"));
  r = simulate("cpu.yaml", nodes, pod("p", "1", "  nodeName: n1\n"),
               "--explain p");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the pod is already bound to node \"n1\""));
  r = simulate("misspelled.yaml", nodes, pod("p", "1"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("did you mean \"FreeCpu\""),
                           HasSubstr("schedplug-host would refuse to start")));
  r = schedplug("simulate --native-only --config " + config("cpu.yaml") +
                " --plugins " + sim_dir() +
                " --nodes /nonexistent/nodes.yaml --pods " +
                temp_file("pods.yaml", pod("p", "1")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/nodes.yaml: cannot read the node "
                               "dump; check the path, or make it with "
                               "`kubectl get nodes -o yaml"));
}

// Without --native-only, simulate runs kube-scheduler-simulate: the
// configuration is checked first, as schedplug-host checks it, and a
// missing program is named with how to get it.
TEST(SimulateCli, KubeSchedulerModeChecksTheConfigAndNamesAMissingSimulator) {
  const std::string nodes = temp_file("nodes.yaml", node_list(node("n1", "1")));
  const std::string pods = temp_file("pods.yaml", pod("p", "1"));
  Outcome r = schedplug("simulate --config " + config("misspelled.yaml") +
                        " --plugins " + sim_dir() + " --nodes " + nodes +
                        " --pods " + pods);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, AllOf(HasSubstr("did you mean \"FreeCpu\""),
                           HasSubstr("schedplug-host refuses to start")));
  r = schedplug("simulate --config " + config("cpu.yaml") + " --plugins " +
                sim_dir() + " --nodes " + nodes + " --pods " + pods +
                " --simulator /nonexistent/kube-scheduler-simulate");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("cannot find kube-scheduler-simulate"),
                    HasSubstr("--simulator "
                              "/nonexistent/kube-scheduler-simulate is not "
                              "an executable file"),
                    HasSubstr("go build -o DIR/kube-scheduler-simulate "
                              "./scheduler/cmd/kube-scheduler-simulate"),
                    HasSubstr("--native-only")));
  EXPECT_EQ(r.out, "");
}

TEST(SimulateCli, TheDocumentedExampleIsRealOutput) {
  const std::string fixtures = std::string(SCHEDPLUG_FIXTURES) + "/simulate/";
  const Outcome r = schedplug("simulate --native-only --config " + fixtures +
                              "cpu.yaml --plugins " + sim_dir() + " --nodes " +
                              fixtures + "nodes.yaml --pods " + fixtures +
                              "pods.yaml --explain shop/web-2");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(slurp(SCHEDPLUG_SIMULATE_DOC), HasSubstr("```\n" + r.out + "```"))
      << "docs/simulate.md's example output differs from this run:\n"
      << r.out;
}

}  // namespace
