// Request limits (docs/security.md, "Limits"), each through the real gRPC
// server: a pod or node field over its bound (INVALID_ARGUMENT naming the
// field, its length and the limit), a session over --max-session-memory
// and all sessions over --max-total-session-memory (RESOURCE_EXHAUSTED),
// and sessions per peer (a peer's own oldest session goes, never another
// peer's). After each refusal a good call succeeds. A 5000-node cluster
// with 110 pods on every node fits the default bounds (figures printed).
// One file: each limit is checked the same way, a refused call and then a good
// one, through the call helpers below.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "host/convert/convert.hpp"
#include "host/session/sessions.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using grpc::StatusCode;

grpc::Status call_prefilter(RunningHost& host, const v1::PreFilterRequest& r,
                            v1::PreFilterResponse* response = nullptr,
                            std::string* trailer = nullptr) {
  grpc::ClientContext context;
  v1::PreFilterResponse ignored;
  const grpc::Status status = host.stub().PreFilter(
      &context, r, response != nullptr ? response : &ignored);
  if (trailer != nullptr) {
    const auto& md = context.GetServerTrailingMetadata();
    const auto it = md.find("schedplug-table-version");
    *trailer =
        it == md.end() ? "" : std::string(it->second.data(), it->second.size());
  }
  return status;
}

v1::PreFilterRequest request_for(const std::string& session,
                                 const v1::Pod& pod) {
  v1::PreFilterRequest r;
  r.set_session_id(session);
  r.set_scheduler_name("default-scheduler");
  *r.mutable_pod() = pod;
  return r;
}

// A full table of `n` nodes named "<prefix>-<i>" at version 1.
v1::NodeTableDelta full_table(RandomCluster& cluster, int n,
                              const std::string& prefix = "node") {
  v1::NodeTableDelta d;
  d.set_full(true);
  d.set_new_version(1);
  for (int i = 0; i < n; ++i) {
    *d.add_upserts() = cluster.node(static_cast<uint32_t>(i),
                                    prefix + "-" + std::to_string(i), 1);
  }
  return d;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class FieldLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.inject_errors = false;
    session_ = host_.handshake();
    v1::PreFilterRequest r = request_for(session_, cluster_.pod());
    *r.mutable_delta() = full_table(cluster_, 3);
    ASSERT_TRUE(call_prefilter(host_, r).ok());
  }

  // A PreFilter on the current table (version 1) with `pod` succeeds.
  void expect_good_call() {
    v1::PreFilterRequest r = request_for(session_, cluster_.pod());
    r.mutable_delta()->set_base_version(1);
    v1::PreFilterResponse response;
    const grpc::Status s = call_prefilter(host_, r, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.table_version(), 1u);
  }

  std::string refused(const std::string& reason) {
    const std::string text = host_.app().metrics().text();
    const std::string key =
        "schedplug_refused_requests_total{reason=\"" + reason + "\"} ";
    const auto at = text.find(key);
    return at == std::string::npos
               ? "none"
               : text.substr(at + key.size(),
                             text.find('\n', at) - at - key.size());
  }

  RunningHost host_;
  RandomCluster cluster_{7};
  std::string session_;
};

TEST_F(FieldLimits, ALongPodLabelValueIsRefusedNamingTheField) {
  v1::Pod pod = cluster_.pod();
  pod.set_namespace_("team-a");
  pod.set_name("web-1");
  v1::KeyValue* kv = pod.add_labels();
  kv->set_key("example.com/long");
  kv->set_value(std::string(300, 'v'));
  v1::PreFilterRequest r = request_for(session_, pod);
  r.mutable_delta()->set_base_version(1);
  std::string trailer;
  const grpc::Status s = call_prefilter(host_, r, nullptr, &trailer);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  const std::string& m = s.error_message();
  EXPECT_TRUE(contains(m, "pod \"team-a/web-1\"")) << m;
  EXPECT_TRUE(contains(m, "labels[\"example.com/long\"] value")) << m;
  EXPECT_TRUE(contains(m, "300 bytes")) << m;
  EXPECT_TRUE(contains(m, "limit of 256 bytes")) << m;
  EXPECT_TRUE(contains(m, "Kubernetes allows 63")) << m;
  // Refused before the table: no trailer, so the shim does not resync.
  EXPECT_EQ(trailer, "");
  EXPECT_EQ(refused("field_length"), "1");
  expect_good_call();
}

TEST_F(FieldLimits, ANodeInADeltaWithALongLabelKeyLeavesTheTable) {
  v1::PreFilterRequest r = request_for(session_, cluster_.pod());
  v1::NodeTableDelta* d = r.mutable_delta();
  d->set_base_version(1);
  d->set_new_version(2);
  v1::Node bad = cluster_.node(3, "bad", 1);
  bad.mutable_labels(1)->set_key("example.com/" + std::string(600, 'k'));
  *d->add_upserts() = cluster_.node(4, "good", 1);
  *d->add_upserts() = bad;
  const grpc::Status s = call_prefilter(host_, r);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  const std::string& m = s.error_message();
  EXPECT_TRUE(contains(m,
                       "node \"bad\" (index 3): labels[1] key is 612 "
                       "bytes long, over the limit of 512 bytes "
                       "(Kubernetes allows 317)"))
      << m;
  // The table is still at version 1 with its three nodes.
  expect_good_call();
}

// The annotations bound (512 KiB together) needs a message that large; it
// is checked on the conversion itself (a 600 KiB request through gRPC
// makes this gRPC version's shutdown wait 10 s for the connection now and
// then, a cost the other tests show is not needed to test the path).
TEST(FieldLimitsConversion, AnnotationsAreBoundedTogether) {
  v1::Node node;
  node.set_name("big");
  for (int i = 0; i < 5; ++i) {
    v1::KeyValue* kv = node.add_annotations();
    kv->set_key("example.com/blob-" + std::to_string(i));
    kv->set_value(std::string(100 * 1024, 'a'));
  }
  EXPECT_NO_THROW(node_from_proto(node));  // 500 KiB and a few bytes
  node.mutable_annotations(0)->mutable_value()->append(30 * 1024, 'a');
  try {
    node_from_proto(node);
    FAIL() << "annotations over 512 KiB were accepted";
  } catch (const host::FieldLimitError& e) {
    EXPECT_EQ(e.kind(), host::FieldLimitError::Kind::kString);
    EXPECT_TRUE(contains(e.what(),
                         "node \"big\": annotations (keys and values "
                         "together) is " +
                             std::to_string(5 * (100 * 1024 + 18) + 30 * 1024) +
                             " bytes long, over the limit of 524288 bytes "
                             "(Kubernetes allows 262144)"))
        << e.what();
  }
}

TEST_F(FieldLimits, TooManyTolerationsAndAPodListOverItsBound) {
  {
    v1::Pod pod = cluster_.pod();
    for (size_t i = 0; i <= host::FieldLimits::kListEntries; ++i) {
      v1::Toleration* t = pod.add_tolerations();
      t->set_key("k" + std::to_string(i));
      t->set_operator_("Exists");
    }
    v1::PreFilterRequest r = request_for(session_, pod);
    r.mutable_delta()->set_base_version(1);
    const grpc::Status s = call_prefilter(host_, r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(),
                         "tolerations has 1025 entries, over the limit of "
                         "1024"))
        << s.error_message();
  }
  {
    // One pod of a node's pod list with an over-long name.
    v1::PreFilterRequest r = request_for(session_, cluster_.pod());
    r.mutable_delta()->set_base_version(1);
    r.mutable_delta()->set_new_version(2);
    v1::Node n = cluster_.node(0, "node-0", 2);
    n.add_pods()->set_name("ok");
    v1::NodePod* p = n.add_pods();
    p->set_namespace_("ns");
    p->set_name(std::string(600, 'p'));
    *r.mutable_delta()->add_upserts() = n;
    const grpc::Status s = call_prefilter(host_, r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(
        contains(s.error_message(), "node \"node-0\" (index 0): pods[1]"))
        << s.error_message();
    EXPECT_TRUE(contains(s.error_message(), "name is 600 bytes long"))
        << s.error_message();
  }
  EXPECT_EQ(refused("list_length"), "1");
  EXPECT_EQ(refused("field_length"), "1");
  expect_good_call();
}

TEST_F(FieldLimits, FilterAndPreScoreCheckTheirPodAndNodeToo) {
  {
    v1::FilterRequest r;
    r.set_session_id(session_);
    r.set_scheduler_name("default-scheduler");
    *r.mutable_pod() = cluster_.pod();
    *r.mutable_node() = cluster_.node(0, "node-0", 1);
    v1::Taint* t = r.mutable_node()->add_taints();
    t->set_key("dedicated");
    t->set_value(std::string(257, 'x'));
    grpc::ClientContext context;
    v1::FilterResponse response;
    const grpc::Status s = host_.stub().Filter(&context, r, &response);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(), "taints[0].value is 257 bytes"))
        << s.error_message();
    r.mutable_node()->mutable_taints()->RemoveLast();
    grpc::ClientContext again;
    const grpc::Status ok = host_.stub().Filter(&again, r, &response);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
  }
  v1::PreScoreRequest r;
  r.set_session_id(session_);
  r.set_scheduler_name("default-scheduler");
  *r.mutable_pod() = cluster_.pod();
  r.mutable_pod()->add_containers()->set_image(std::string(5000, 'i'));
  r.set_table_version(1);
  r.add_nodes(0);
  grpc::ClientContext context;
  v1::PreScoreResponse response;
  const grpc::Status s = host_.stub().PreScore(&context, r, &response);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(contains(s.error_message(), "containers[0].image is 5000 bytes"))
      << s.error_message();
  r.mutable_pod()->clear_containers();
  grpc::ClientContext again;
  const grpc::Status ok = host_.stub().PreScore(&again, r, &response);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
}

// ABI v1.3 data is bounded like the rest: a pod's volumes, a node's images
// and each image's names, affinity and spread terms.
TEST_F(FieldLimits, VolumesImagesAndAffinityTermsAreBounded) {
  {
    v1::Pod pod = cluster_.pod();
    pod.set_name("many-volumes");
    for (size_t i = 0; i <= host::FieldLimits::kListEntries; ++i) {
      v1::Volume* v = pod.add_volumes();
      v->set_name("v" + std::to_string(i));
      v->set_source("emptyDir");
    }
    v1::PreFilterRequest r = request_for(session_, pod);
    r.mutable_delta()->set_base_version(1);
    const grpc::Status s = call_prefilter(host_, r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(),
                         "many-volumes\": volumes has 1025 entries, over "
                         "the limit of 1024"))
        << s.error_message();
  }
  {
    v1::Pod pod = cluster_.pod();
    v1::Volume* v = pod.add_volumes();
    v->set_name("data");
    v->set_source("persistentVolumeClaim");
    v->set_claim_name(std::string(600, 'c'));
    v1::PreFilterRequest r = request_for(session_, pod);
    r.mutable_delta()->set_base_version(1);
    const grpc::Status s = call_prefilter(host_, r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(
        contains(s.error_message(), "volumes[0].claim_name is 600 bytes long"))
        << s.error_message();
  }
  {
    v1::PreFilterRequest r = request_for(session_, cluster_.pod());
    r.mutable_delta()->set_base_version(1);
    r.mutable_delta()->set_new_version(2);
    v1::Node n = cluster_.node(0, "node-0", 2);
    n.add_images()->add_names("registry.example/ok:1");
    v1::NodeImage* image = n.add_images();
    image->add_names("registry.example/ok:2");
    image->add_names("registry.example/" + std::string(5000, 'i'));
    *r.mutable_delta()->add_upserts() = n;
    const grpc::Status s = call_prefilter(host_, r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(),
                         "node \"node-0\" (index 0): images[1].names[1] is "
                         "5017 bytes long, over the limit of 4096 bytes"))
        << s.error_message();
  }
  {
    // A selector value deep in a pod anti-affinity term.
    v1::Pod pod = cluster_.pod();
    v1::PodAffinityTerm* t = pod.add_pod_anti_affinity_required();
    t->set_topology_key("kubernetes.io/hostname");
    v1::SelectorRequirement* r =
        t->mutable_label_selector()->add_match_expressions();
    r->set_key("app");
    r->set_operator_("In");
    r->add_values("web");
    r->add_values(std::string(700, 'v'));
    v1::PreFilterRequest req = request_for(session_, pod);
    req.mutable_delta()->set_base_version(1);
    const grpc::Status s = call_prefilter(host_, req);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(),
                         "pod_anti_affinity_required[0].label_selector."
                         "match_expressions[0].values[1] is 700 bytes long"))
        << s.error_message();
  }
  {
    v1::Pod pod = cluster_.pod();
    for (size_t i = 0; i <= host::FieldLimits::kListEntries; ++i) {
      pod.add_topology_spread()->set_topology_key("zone");
    }
    v1::PreFilterRequest req = request_for(session_, pod);
    req.mutable_delta()->set_base_version(1);
    const grpc::Status s = call_prefilter(host_, req);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(contains(s.error_message(),
                         "topology_spread has 1025 entries, over the limit"))
        << s.error_message();
  }
  EXPECT_EQ(refused("list_length"), "2");
  EXPECT_EQ(refused("field_length"), "3");
  expect_good_call();
}

// --- Memory ---------------------------------------------------------------

TEST(SessionMemory, ADeltaPastTheSessionBoundIsRefusedAndASmallOneWorks) {
  RunningHost host(
      [](HostOptions& o) { o.service.max_session_memory = 64 * 1024; });
  RandomCluster cluster(3);
  cluster.inject_errors = false;
  const std::string session = host.handshake();
  v1::PreFilterRequest r = request_for(session, cluster.pod());
  *r.mutable_delta() = full_table(cluster, 10);
  ASSERT_TRUE(call_prefilter(host, r).ok());
  const size_t held = host.app().pipeline().sessions().total_memory();
  EXPECT_GT(held, 10u * 1000);
  EXPECT_LT(held, 64u * 1024);

  // 100 more nodes of about 1 KB each do not fit in 64 KiB.
  v1::NodeTableDelta* d = r.mutable_delta();
  d->Clear();
  d->set_base_version(1);
  d->set_new_version(2);
  for (uint32_t i = 10; i < 110; ++i) {
    *d->add_upserts() = cluster.node(i, "more-" + std::to_string(i), 1);
  }
  std::string trailer;
  const grpc::Status s = call_prefilter(host, r, nullptr, &trailer);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  const std::string& m = s.error_message();
  EXPECT_TRUE(contains(m, "session " + session + " would hold about")) << m;
  EXPECT_TRUE(contains(m, "100 upserts on a table of 10 nodes")) << m;
  EXPECT_TRUE(contains(m, "over --max-session-memory (64.00 KiB)")) << m;
  EXPECT_TRUE(contains(m, "unchanged at version 1")) << m;
  EXPECT_TRUE(contains(m, "raise --max-session-memory")) << m;
  EXPECT_EQ(trailer, "1");  // the shim keeps its delta, no resync
  EXPECT_EQ(host.app().pipeline().sessions().total_memory(), held);
  EXPECT_TRUE(contains(
      host.app().metrics().text(),
      "schedplug_refused_requests_total{reason=\"session_memory\"} 1"));

  // Two more nodes fit.
  d->mutable_upserts()->DeleteSubrange(2, 98);
  v1::PreFilterResponse response;
  const grpc::Status ok = call_prefilter(host, r, &response);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(response.table_version(), 2u);
  EXPECT_GT(host.app().pipeline().sessions().total_memory(), held);
}

TEST(SessionMemory, AllSessionsTogetherAreBoundedToo) {
  RunningHost host([](HostOptions& o) {
    o.service.max_session_memory = 0;  // no per-session bound
    o.service.max_total_session_memory = 160 * 1024;
  });
  RandomCluster cluster(4);
  cluster.inject_errors = false;
  const std::string a = host.handshake();
  v1::PreFilterRequest ra = request_for(a, cluster.pod());
  *ra.mutable_delta() = full_table(cluster, 100, "a");
  ASSERT_TRUE(call_prefilter(host, ra).ok());
  const size_t held_by_a = host.app().pipeline().sessions().total_memory();
  ASSERT_GT(held_by_a, 80u * 1024);  // so that another 50 nodes cannot fit

  const std::string b = host.handshake();
  v1::PreFilterRequest rb = request_for(b, cluster.pod());
  *rb.mutable_delta() = full_table(cluster, 100, "b");
  const grpc::Status s = call_prefilter(host, rb);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  const std::string& m = s.error_message();
  EXPECT_TRUE(contains(m, "full table, 100 upserts")) << m;
  EXPECT_TRUE(contains(m, "over --max-total-session-memory (160.00 KiB)")) << m;
  EXPECT_TRUE(contains(m, "Raise --max-total-session-memory")) << m;
  EXPECT_TRUE(contains(
      host.app().metrics().text(),
      "schedplug_refused_requests_total{reason=\"total_session_memory\"} 1"));

  // A smaller table fits beside a's, and a's session still works.
  *rb.mutable_delta() = full_table(cluster, 5, "b");
  const grpc::Status ok = call_prefilter(host, rb);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  ra.mutable_delta()->Clear();
  ra.mutable_delta()->set_base_version(1);
  const grpc::Status still = call_prefilter(host, ra);
  EXPECT_TRUE(still.ok()) << still.error_message();
  const size_t total = host.app().pipeline().sessions().total_memory();
  EXPECT_GT(total, held_by_a);
  EXPECT_TRUE(
      contains(host.app().metrics().text(),
               "schedplug_session_memory_bytes " + std::to_string(total)))
      << host.app().metrics().text();
}

// Over the total bound, the caller's own peer's idle sessions make room
// (a restarted scheduler's stale session), but not recently used ones.
TEST(SessionMemory, AStaleSessionOfTheSamePeerMakesRoom) {
  for (const bool idle_long_enough : {false, true}) {
    RunningHost host([&](HostOptions& o) {
      o.service.max_session_memory = 0;
      o.service.max_total_session_memory = 160 * 1024;
      o.service.idle_before_memory_drop =
          std::chrono::seconds(idle_long_enough ? 0 : 3600);
    });
    RandomCluster cluster(9);
    cluster.inject_errors = false;
    const std::string stale = host.handshake();
    v1::PreFilterRequest r = request_for(stale, cluster.pod());
    *r.mutable_delta() = full_table(cluster, 100, "a");
    ASSERT_TRUE(call_prefilter(host, r).ok());

    const std::string fresh = host.handshake();
    r.set_session_id(fresh);
    const grpc::Status s = call_prefilter(host, r);
    r.set_session_id(stale);
    const grpc::Status old = call_prefilter(host, r);
    if (idle_long_enough) {
      EXPECT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(old.error_code(), StatusCode::FAILED_PRECONDITION)
          << old.error_message();
      EXPECT_EQ(host.app().pipeline().sessions().size(), 1u);
    } else {
      EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED)
          << s.error_message();
      EXPECT_TRUE(old.ok()) << old.error_message();
    }
  }
}

// The node table's byte count follows every kind of change, and a delta
// that does not grow the table is never refused for size.
TEST(SessionMemory, TableBytesFollowUpsertsRemovalsAndFullTables) {
  RandomCluster cluster(5);
  auto upsert = [&](uint32_t slot, const std::string& name, int labels) {
    const NodeModel r(node_from_proto(cluster.node(slot, name, 1, labels)));
    return NodeUpsert{slot, 1, CompactNode::copy_of(r.view())};
  };
  NodeTable table;
  EXPECT_EQ(table.bytes(), 0u);
  TableDelta full;
  full.full = true;
  full.new_version = 1;
  size_t expect = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    full.upserts.push_back(upsert(i, "n" + std::to_string(i), 20));
    expect += NodeTable::node_bytes(*full.upserts.back().node) +
              NodeTable::kSlotBytes;
  }
  table.apply(full);
  EXPECT_EQ(table.bytes(), expect);

  // Replace n1 with a smaller copy and remove n3 (the last slot).
  TableDelta d;
  d.base_version = 1;
  d.new_version = 2;
  d.upserts.push_back(upsert(1, "n1", 2));
  d.removed.push_back(3);
  expect -= NodeTable::node_bytes(*table.at(1)) +
            NodeTable::node_bytes(*table.at(3)) + NodeTable::kSlotBytes;
  expect += NodeTable::node_bytes(*d.upserts[0].node);
  // Shrinking: allowed even with a bound below what the table holds.
  table.apply(d, 1);
  EXPECT_EQ(table.bytes(), expect);

  TableDelta grow;
  grow.base_version = 2;
  grow.new_version = 3;
  grow.upserts.push_back(upsert(3, "n3", 20));
  try {
    table.apply(grow, table.bytes() + 10);
    FAIL() << "a delta past max_bytes was applied";
  } catch (const DeltaError& e) {
    EXPECT_EQ(e.kind(), DeltaError::Kind::kTooLarge);
    EXPECT_EQ(e.bytes_after(),
              expect + NodeTable::node_bytes(*grow.upserts[0].node) +
                  NodeTable::kSlotBytes);
  }
  EXPECT_EQ(table.version(), 2u);
  EXPECT_EQ(table.bytes(), expect);
}

// --- Sessions per peer ----------------------------------------------------

TEST(SessionsPerPeer, APeerOverItsBoundLosesItsOwnOldestSession) {
  RunningHost host([](HostOptions& o) { o.service.max_sessions_per_peer = 2; });
  const std::string a = host.handshake();
  const std::string b = host.handshake();
  const std::string c = host.handshake();
  // Every call here comes from this process's uid: one peer, named by the
  // uid the unix socket's SO_PEERCRED reported.
  const std::string peer = "uid " + std::to_string(::geteuid());
  EXPECT_EQ(host.app().pipeline().sessions().sessions_of(peer), 2u);
  RandomCluster cluster(6);
  cluster.inject_errors = false;
  v1::PreFilterRequest r = request_for(a, cluster.pod());
  *r.mutable_delta() = full_table(cluster, 2);
  const grpc::Status gone = call_prefilter(host, r);
  EXPECT_EQ(gone.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(contains(gone.error_message(), "handshake again"))
      << gone.error_message();
  for (const std::string& id : {b, c}) {
    r.set_session_id(id);
    const grpc::Status s = call_prefilter(host, r);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
}

// Another peer opening sessions never evicts the scheduler's: not through
// the per-peer bound, and not through --max-sessions (the peer holding the
// most sessions loses one).
TEST(SessionsPerPeer, AnotherPeerCannotEvictTheSchedulersSession) {
  SessionRegistry registry({.max_sessions = 6,
                            .max_sessions_per_peer = 4,
                            .idle_timeout = std::chrono::seconds(3600)});
  const auto scheduler = registry.create("scheduler", "uid 100");
  for (int i = 0; i < 20; ++i) registry.create("flood", "uid 200");
  EXPECT_EQ(registry.find(scheduler->id), scheduler);
  EXPECT_EQ(registry.sessions_of("uid 200"), 4u);
  // Three more peers with one session each fill --max-sessions; the
  // flooding peer, holding the most, loses sessions, not the others.
  for (const char* peer : {"uid 300", "uid 400", "uid 500"}) {
    registry.create("other", peer);
  }
  EXPECT_EQ(registry.size(), 6u);
  EXPECT_EQ(registry.find(scheduler->id), scheduler);
  EXPECT_EQ(registry.sessions_of("uid 200"), 2u);
  EXPECT_EQ(registry.sessions_of("uid 300"), 1u);
  EXPECT_EQ(registry.sessions_of("uid 500"), 1u);
}

// --- A large cluster fits the defaults -------------------------------------

// A pod as kube-scheduler's NodeInfo lists it (the shim's NodePod): a
// Deployment's pod with the usual labels and requests.
void add_realistic_pod(v1::Node& node, int i) {
  v1::NodePod* p = node.add_pods();
  p->set_namespace_("team-" + std::to_string(i % 7) + "-payments");
  p->set_name("checkout-api-" + std::to_string(i % 13) + "d9f8b6c5d-x2k" +
              std::to_string(i));
  auto label = [&](const std::string& k, const std::string& v) {
    v1::KeyValue* kv = p->add_labels();
    kv->set_key(k);
    kv->set_value(v);
  };
  label("app", "checkout-api-" + std::to_string(i % 13));
  label("pod-template-hash", "7d9f8b6c5d");
  label("app.kubernetes.io/name", "checkout-api");
  label("app.kubernetes.io/instance", "checkout-prod");
  label("app.kubernetes.io/component", "backend");
  label("version", "v1.42.3");
  p->set_priority(1000);
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"cpu", 250},
                                    {"memory", int64_t{512} << 20},
                                    {"ephemeral-storage", int64_t{1} << 30},
                                    {"pods", 1}}) {
    v1::Resource* r = p->add_requests();
    r->set_name(name);
    r->set_value(value);
  }
  p->set_owner_kind("ReplicaSet");
}

// The node's own data as the shim sends it with every data bit declared:
// 20 labels, annotations as kubeadm, a CSI driver and a CNI set them,
// conditions, capacity and the pod list.
v1::Node realistic_node(RandomCluster& cluster, uint32_t slot, int pods) {
  v1::Node n = cluster.node(
      slot, "ip-10-0-" + std::to_string(slot) + ".eu-west-1.compute.internal",
      1);
  auto annotate = [&](const std::string& k, const std::string& v) {
    v1::KeyValue* kv = n.add_annotations();
    kv->set_key(k);
    kv->set_value(v);
  };
  annotate("node.alpha.kubernetes.io/ttl", "0");
  annotate("volumes.kubernetes.io/controller-managed-attach-detach", "true");
  annotate("kubeadm.alpha.kubernetes.io/cri-socket",
           "unix:///var/run/containerd/containerd.sock");
  annotate("csi.volume.kubernetes.io/nodeid",
           "{\"ebs.csi.aws.com\":\"i-0a1b2c3d4e5f60718\"}");
  annotate("flannel.alpha.coreos.com/backend-data",
           "{\"VNI\":1,\"VtepMAC\":\"9a:3c:5e:11:22:33\"}");
  annotate("flannel.alpha.coreos.com/public-ip", "10.0.12.34");
  for (const char* type : {"Ready", "MemoryPressure", "DiskPressure",
                           "PIDPressure", "NetworkUnavailable"}) {
    v1::NodeCondition* c = n.add_conditions();
    c->set_type(type);
    c->set_status(std::string(type) == "Ready" ? "True" : "False");
  }
  for (const char* r : {"cpu", "memory", "ephemeral-storage", "pods",
                        "hugepages-2Mi", "hugepages-1Gi"}) {
    v1::Resource* c = n.add_capacity();
    c->set_name(r);
    c->set_value(1000);
  }
  for (int i = 0; i < pods; ++i) add_realistic_pod(n, i);
  return n;
}

TEST(SessionMemory, FiveThousandNodesWithTheirPodListsFitTheDefaults) {
  RunningHost host;  // default bounds and message size
  const ServiceOptions defaults;
  RandomCluster cluster(8);
  cluster.inject_errors = false;
  const std::string session = host.handshake();
  constexpr uint32_t kNodes = 5000;
#ifdef SCHEDPLUG_SANITIZED_BUILD
  // 5-20 times slower under the sanitizers: a tenth, scaled up below.
  constexpr uint32_t kSent = 500;
#else
  constexpr uint32_t kSent = kNodes;
#endif
  constexpr int kPods = 110;
  constexpr uint32_t kPerDelta = 500;  // keeps each message under 64 MiB
  // Every node has the same pod list (building 550,000 pods one by one
  // would take most of the test's time); only the names differ.
  const v1::Node shape = realistic_node(cluster, 0, kPods);
  const struct mallinfo2 before = ::mallinfo2();
  size_t wire = 0;
  uint64_t version = 0;
  for (uint32_t first = 0; first < kSent; first += kPerDelta) {
    v1::PreFilterRequest r = request_for(session, cluster.pod());
    v1::NodeTableDelta* d = r.mutable_delta();
    d->set_full(first == 0);
    d->set_base_version(version);
    d->set_new_version(version + 1);
    for (uint32_t i = first; i < first + kPerDelta; ++i) {
      v1::Node* n = d->add_upserts();
      *n = shape;
      n->set_index(i);
      n->set_name("ip-10-0-" + std::to_string(i) +
                  ".eu-west-1.compute.internal");
      n->mutable_labels(0)->set_value(n->name());  // kubernetes.io/hostname
    }
    wire += d->ByteSizeLong();
    v1::PreFilterResponse response;
    const grpc::Status s = call_prefilter(host, r, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    version = response.table_version();
  }
  const struct mallinfo2 after = ::mallinfo2();
  const double scale = static_cast<double>(kNodes) / kSent;
  const double held =
      static_cast<double>(host.app().pipeline().sessions().total_memory()) *
      scale;
  const double heap = (static_cast<double>(after.uordblks + after.hblkhd) -
                       static_cast<double>(before.uordblks + before.hblkhd)) *
                      scale;
  std::printf(
      "%u nodes x %d pods in their pod lists%s: %.1f MiB on the wire, the "
      "session accounts %.1f MiB, the heap in use grew by %.1f MiB "
      "(--max-session-memory %.0f MiB, --max-total-session-memory %.0f "
      "MiB)\n",
      kNodes, kPods, kSent == kNodes ? "" : " (a tenth sent, scaled up)",
      static_cast<double>(wire) * scale / (1 << 20), held / (1 << 20),
      heap / (1 << 20),
      static_cast<double>(defaults.max_session_memory) / (1 << 20),
      static_cast<double>(defaults.max_total_session_memory) / (1 << 20));
  // Room for the same cluster twice more in one session, and for a
  // restarted scheduler's new session beside its stale one.
  EXPECT_LT(3 * held, static_cast<double>(defaults.max_session_memory));
  EXPECT_LT(2 * held, static_cast<double>(defaults.max_total_session_memory));
}

}  // namespace
}  // namespace schedplug::host::testing
