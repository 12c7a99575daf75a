// ABI v1.2 pod and node data through the real server (gRPC, node table,
// chains, loader): plugins declare what they read in create(), the
// Handshake reports the union, and the data the shim sends reaches the
// plugins' views (data_plugins/). The shared test configuration declares
// no data: its Handshake carries no `data` field at all.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

constexpr const char* kProfile = "data-scheduler";

class PodDataTest : public ::testing::Test {
 protected:
  PodDataTest() {
    const auto config = dir_.path() / "config.yaml";
    std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: data-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: PodsOnNode
          - name: PodDataProbe
)";
    host_ = std::make_unique<RunningHost>([&](HostOptions& o) {
      o.config = config;
      o.plugins = SCHEDPLUG_DATA_PLUGIN_DIR;
    });
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("data-test");
    v1::ProfilePlugins* p = request.add_profiles();
    p->set_scheduler_name(kProfile);
    p->add_plugins("PodsOnNode");
    p->add_plugins("PodDataProbe");
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().Handshake(&c, request, &handshake_);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  static v1::NodePod node_pod(const std::string& name, const std::string& app,
                              const std::string& owner_kind = "") {
    v1::NodePod p;
    p.set_namespace_("ns");
    p.set_name(name);
    v1::KeyValue* kv = p.add_labels();
    kv->set_key("app");
    kv->set_value(app);
    p.set_priority(7);
    v1::Resource* cpu = p.add_requests();
    cpu->set_name("cpu");
    cpu->set_value(100);
    p.set_owner_kind(owner_kind);
    return p;
  }

  TempDir dir_;
  std::unique_ptr<RunningHost> host_;
  v1::HandshakeResponse handshake_;
};

TEST_F(PodDataTest, HandshakeCarriesTheDeclaredData) {
  EXPECT_EQ(
      handshake_.data(),
      SCHEDPLUG_DATA_NODE_PODS | SCHEDPLUG_DATA_POD_NODE_NAME |
          SCHEDPLUG_DATA_POD_NOMINATED_NODE |
          SCHEDPLUG_DATA_POD_PRIORITY_CLASS | SCHEDPLUG_DATA_POD_OWNERS |
          SCHEDPLUG_DATA_POD_CONTAINERS | SCHEDPLUG_DATA_NODE_UNSCHEDULABLE |
          SCHEDPLUG_DATA_NODE_CONDITIONS | SCHEDPLUG_DATA_NODE_CAPACITY |
          SCHEDPLUG_DATA_POD_VOLUMES | SCHEDPLUG_DATA_NODE_IMAGES |
          SCHEDPLUG_DATA_POD_NODE_AFFINITY |
          SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD | SCHEDPLUG_DATA_POD_AFFINITY);
  for (const v1::PluginInfo& p : handshake_.plugins()) {
    if (p.name() == "PodsOnNode") {
      EXPECT_EQ(p.data(), SCHEDPLUG_DATA_NODE_PODS);
    } else {
      EXPECT_EQ(p.name(), "PodDataProbe");
      EXPECT_EQ(p.data() & SCHEDPLUG_DATA_NODE_PODS, 0u);
    }
  }
}

// A scheduler whose plugins declare nothing gets a Handshake without the
// field, byte for byte what it got before v1.2.
TEST(PodDataNone, HandshakeWithoutDataIsUnchanged) {
  RunningHost host;
  grpc::ClientContext c;
  v1::HandshakeResponse response;
  ASSERT_TRUE(
      host.stub().Handshake(&c, test_handshake_request(), &response).ok());
  EXPECT_EQ(response.data(), 0u);
  v1::HandshakeResponse before = response;  // as a v1.1 host builds it
  before.clear_data();
  for (v1::PluginInfo& p : *before.mutable_plugins()) p.clear_data();
  before.clear_session_id();
  v1::HandshakeResponse after = response;
  after.clear_session_id();
  std::printf(
      "handshake response bytes (test config, no data declared): "
      "%zu after, %zu before (the same message without the v1.2 "
      "fields)\n",
      after.ByteSizeLong(), before.ByteSizeLong());
  EXPECT_EQ(after.SerializeAsString(), before.SerializeAsString());
}

TEST_F(PodDataTest, NodePodListsFollowTheDeltas) {
  v1::PreFilterRequest pf;
  pf.set_session_id(handshake_.session_id());
  pf.set_scheduler_name(kProfile);
  pf.mutable_pod()->set_name("web-new");
  v1::KeyValue* app = pf.mutable_pod()->add_labels();
  app->set_key("app");
  app->set_value("web");
  v1::NodeTableDelta* d = pf.mutable_delta();
  d->set_full(true);
  d->set_new_version(1);
  for (uint32_t i = 0; i < 3; ++i) {
    v1::Node* n = d->add_upserts();
    n->set_index(i);
    n->set_name("n" + std::to_string(i));
    n->set_generation(1);
  }
  // n1: two web pods and a db pod; n2: one web pod.
  *d->mutable_upserts(1)->add_pods() = node_pod("w1", "web", "ReplicaSet");
  *d->mutable_upserts(1)->add_pods() = node_pod("w2", "web");
  *d->mutable_upserts(1)->add_pods() = node_pod("d1", "db");
  *d->mutable_upserts(2)->add_pods() = node_pod("w3", "web");
  v1::PreFilterResponse pfr;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(host_->stub().PreFilter(&c, pf, &pfr).ok());
  }
  auto scores = [&](const v1::Pod& pod) {
    v1::PreScoreRequest ps;
    ps.set_session_id(handshake_.session_id());
    ps.set_scheduler_name(kProfile);
    *ps.mutable_pod() = pod;
    ps.set_table_version(pfr.table_version());
    for (uint32_t i = 0; i < 3; ++i) ps.add_nodes(i);
    v1::PreScoreResponse r;
    grpc::ClientContext c;
    EXPECT_TRUE(host_->stub().PreScore(&c, ps, &r).ok());
    for (const v1::PluginScores& p : r.plugins()) {
      if (p.plugin() == "PodsOnNode") {
        EXPECT_EQ(p.error(), "");
        return std::vector<int64_t>(p.scores().begin(), p.scores().end());
      }
    }
    ADD_FAILURE() << "no PodsOnNode scores";
    return std::vector<int64_t>{};
  };
  // web: 0, 2, 1 pods -> LINEAR 0, 100, 50.
  EXPECT_EQ(scores(pf.pod()), (std::vector<int64_t>{0, 100, 50}));

  // A delta moves pods: n1 loses its web pods, n0 gains three. Only the
  // changed nodes are sent, each with its whole new list.
  pf.mutable_pod()->set_name("web-next");
  v1::NodeTableDelta* next = pf.mutable_delta();
  next->Clear();
  next->set_base_version(1);
  next->set_new_version(2);
  v1::Node* n0 = next->add_upserts();
  n0->set_index(0);
  n0->set_name("n0");
  n0->set_generation(2);
  for (const char* name : {"w4", "w5", "w6"})
    *n0->add_pods() = node_pod(name, "web");
  v1::Node* n1 = next->add_upserts();
  n1->set_index(1);
  n1->set_name("n1");
  n1->set_generation(2);
  *n1->add_pods() = node_pod("d1", "db");
  {
    grpc::ClientContext c;
    ASSERT_TRUE(host_->stub().PreFilter(&c, pf, &pfr).ok());
  }
  // web: 3, 0, 1 -> 100, 0, 33.
  EXPECT_EQ(scores(pf.pod()), (std::vector<int64_t>{100, 0, 33}));
  v1::Pod db = pf.pod();
  db.mutable_labels(0)->set_value("db");
  EXPECT_EQ(scores(db), (std::vector<int64_t>{0, 100, 0}));
}

TEST_F(PodDataTest, PodAndNodeFieldsReachThePlugin) {
  v1::FilterRequest fr;
  fr.set_session_id(handshake_.session_id());
  fr.set_scheduler_name(kProfile);
  v1::Pod* pod = fr.mutable_pod();
  pod->set_name("probe");
  v1::KeyValue* kv = pod->add_labels();
  kv->set_key("probe");
  pod->set_node_name("n1");
  pod->set_nominated_node_name("n2");
  pod->set_priority_class_name("high");
  v1::OwnerRef* owner = pod->add_owners();
  owner->set_kind("ReplicaSet");
  owner->set_name("rs");
  owner->set_controller(true);
  v1::Container* c = pod->add_containers();
  c->set_name("main");
  c->set_image("img:1");
  v1::Resource* r = c->add_requests();
  r->set_name("cpu");
  r->set_value(250);
  r = c->add_limits();
  r->set_name("cpu");
  r->set_value(500);
  v1::ContainerPort* port = c->add_ports();
  port->set_container_port(8080);
  port->set_host_port(9090);
  port->set_protocol("TCP");
  v1::Node* node = fr.mutable_node();
  node->set_name("n1");
  node->set_unschedulable(true);
  v1::NodeCondition* cond = node->add_conditions();
  cond->set_type("MemoryPressure");
  cond->set_status("False");
  cond = node->add_conditions();
  cond->set_type("Ready");
  cond->set_status("True");
  r = node->add_capacity();
  r->set_name("cpu");
  r->set_value(4000);
  fr.add_plugins("PodDataProbe");
  v1::FilterResponse response;
  grpc::ClientContext ctx;
  ASSERT_TRUE(host_->stub().Filter(&ctx, fr, &response).ok());
  EXPECT_EQ(response.reason(),
            "saw nodeName=n1 nominated=n2 class=high "
            "owner=ReplicaSet/rs(controller) containers=1 image=img:1 "
            "cpu=250/500 port=8080/TCP/9090 unschedulable=1 Ready=True "
            "capacity.cpu=4000");
}

// ABI v1.3 data: the pod's volumes and the node's images.
TEST_F(PodDataTest, VolumesAndImagesReachThePlugin) {
  v1::FilterRequest fr;
  fr.set_session_id(handshake_.session_id());
  fr.set_scheduler_name(kProfile);
  v1::Pod* pod = fr.mutable_pod();
  pod->set_name("probe");
  v1::KeyValue* kv = pod->add_labels();
  kv->set_key("probe");
  kv->set_value("v1.3");
  v1::Volume* v = pod->add_volumes();
  v->set_name("data");
  v->set_source("persistentVolumeClaim");
  v->set_claim_name("pvc-1");
  v->set_read_only(true);
  v = pod->add_volumes();
  v->set_name("scratch");
  v->set_source("ephemeral");
  v->set_claim_name("probe-scratch");
  v = pod->add_volumes();
  v->set_name("config");
  v->set_source("configMap");
  v1::Node* node = fr.mutable_node();
  node->set_name("n1");
  v1::NodeImage* image = node->add_images();
  image->add_names("registry.example/app@sha256:0123");
  image->add_names("registry.example/app:1");
  image->set_size_bytes(1000);
  node->add_images()->add_names("registry.k8s.io/pause:3.10");
  fr.add_plugins("PodDataProbe");
  v1::FilterResponse response;
  grpc::ClientContext ctx;
  ASSERT_TRUE(host_->stub().Filter(&ctx, fr, &response).ok());
  EXPECT_EQ(response.reason(),
            "v1.3 volumes=3 data:persistentVolumeClaim:pvc-1:ro "
            "scratch:ephemeral:probe-scratch:rw images=2 "
            "registry.example/app@sha256:0123/1000");
}

// ABI v1.3 data: node affinity, topology spread, pod (anti-)affinity.
TEST_F(PodDataTest, AffinityAndSpreadTermsReachThePlugin) {
  v1::FilterRequest fr;
  fr.set_session_id(handshake_.session_id());
  fr.set_scheduler_name(kProfile);
  v1::Pod* pod = fr.mutable_pod();
  pod->set_name("probe");
  v1::KeyValue* kv = pod->add_labels();
  kv->set_key("probe");
  kv->set_value("v1.3-affinity");
  v1::SelectorRequirement* r =
      pod->add_node_affinity_required()->add_match_expressions();
  r->set_key("zone");
  r->set_operator_("In");
  r->add_values("a");
  r->add_values("b");
  v1::NodeSelectorTerm* preferred = pod->add_node_affinity_preferred();
  preferred->set_weight(30);
  r = preferred->add_match_expressions();
  r->set_key("gpu");
  r->set_operator_("Exists");
  v1::TopologySpreadConstraint* c = pod->add_topology_spread();
  c->set_max_skew(1);
  c->set_min_domains(2);
  c->set_topology_key("zone");
  c->set_when_unsatisfiable("DoNotSchedule");
  c->set_node_affinity_policy("Honor");
  kv = c->mutable_label_selector()->add_match_labels();
  kv->set_key("app");
  kv->set_value("web");
  v1::PodAffinityTerm* t = pod->add_pod_affinity_preferred();
  t->set_weight(10);
  t->set_topology_key("zone");
  t->mutable_label_selector();  // present and empty: every pod
  t = pod->add_pod_anti_affinity_required();
  t->set_topology_key("hostname");
  kv = t->mutable_label_selector()->add_match_labels();
  kv->set_key("app");
  kv->set_value("web");
  r = t->mutable_label_selector()->add_match_expressions();
  r->set_key("tier");
  r->set_operator_("NotIn");
  r->add_values("db");
  t->add_namespaces("a");
  t->add_namespaces("b");
  t->add_match_label_keys("hash");
  fr.mutable_node()->set_name("n1");
  fr.add_plugins("PodDataProbe");
  v1::FilterResponse response;
  grpc::ClientContext ctx;
  ASSERT_TRUE(host_->stub().Filter(&ctx, fr, &response).ok());
  EXPECT_EQ(response.reason(),
            "v1.3 nodeAffinity=1/1 zone:In:a,b pref=30:gpu:Exists spread=1 "
            "1/zone/DoNotSchedule/min=2/Honor/-/{app=web} affinity=0/1/1/0 "
            "pref=10/zone/{} anti=hostname/{app=web,tier:NotIn:db}/ns=2/"
            "keys=hash");
}

}  // namespace
}  // namespace schedplug::host::testing
