// A C++ client drives the real server over a unix socket. For thousands of
// random pods over random node tables that change by deltas (updates,
// removals, slot reuse) and are resynced now and then, every PreFilter and
// PreScore answer must equal the direct in-process evaluation.
#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

// What the shim would keep: its copy of the table and the version.
struct ShimTable {
  std::map<uint32_t, v1::Node> nodes;
  uint64_t version = 0;
  int64_t generation = 0;
  uint64_t next_name = 0;
};

class Equivalence : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = std::make_unique<RunningHost>();
    direct_ = std::make_unique<DirectEvaluator>(
        host_->dir() / "scheduler-config.yaml", test_plugin_dir());
  }

  v1::NodeTableDelta full_table(ShimTable& shim, RandomCluster& rnd,
                                size_t count) {
    shim.nodes.clear();
    v1::NodeTableDelta d;
    d.set_full(true);
    for (uint32_t slot = 0; slot < count; ++slot) {
      const std::string name = "node-" + std::to_string(shim.next_name++);
      shim.nodes[slot] = rnd.node(slot, name, ++shim.generation);
    }
    for (auto& [slot, node] : shim.nodes) *d.add_upserts() = node;
    d.set_new_version(++shim.version);
    return d;
  }

  // A random delta: a few changed nodes, some removed, some added (often
  // into a freed slot), like the shim sends between two pods.
  v1::NodeTableDelta random_delta(ShimTable& shim, RandomCluster& rnd) {
    v1::NodeTableDelta d;
    d.set_base_version(shim.version);
    auto& rng = rnd.rng();
    std::set<uint32_t> touched;
    const int updates = static_cast<int>(rng() % 4);
    const int removals = rng() % 5 == 0 ? static_cast<int>(rng() % 3) : 0;
    const int additions = rng() % 5 == 0 ? static_cast<int>(rng() % 3) : 0;
    for (int i = 0; i < updates && !shim.nodes.empty(); ++i) {
      auto it = std::next(shim.nodes.begin(),
                          static_cast<long>(rng() % shim.nodes.size()));
      if (!touched.insert(it->first).second) continue;
      it->second = rnd.node(it->first, it->second.name(), ++shim.generation);
      *d.add_upserts() = it->second;
    }
    std::vector<uint32_t> freed;
    for (int i = 0; i < removals && shim.nodes.size() > 1; ++i) {
      auto it = std::next(shim.nodes.begin(),
                          static_cast<long>(rng() % shim.nodes.size()));
      if (touched.contains(it->first)) continue;
      touched.insert(it->first);
      d.add_removed(it->first);
      freed.push_back(it->first);
      shim.nodes.erase(it);
    }
    for (int i = 0; i < additions; ++i) {
      uint32_t slot;
      if (!freed.empty() && rng() % 2 == 0) {
        slot = freed.back();  // reuse a slot removed in this very delta
        freed.pop_back();
      } else {
        slot = shim.nodes.empty() ? 0 : shim.nodes.rbegin()->first + 1;
      }
      if (shim.nodes.contains(slot)) continue;
      const std::string name = "node-" + std::to_string(shim.next_name++);
      shim.nodes[slot] = rnd.node(slot, name, ++shim.generation);
      *d.add_upserts() = shim.nodes[slot];
    }
    if (d.upserts_size() + d.removed_size() > 0) {
      d.set_new_version(++shim.version);
    }
    return d;
  }

  std::unique_ptr<RunningHost> host_;
  std::unique_ptr<DirectEvaluator> direct_;
};

TEST_F(Equivalence, RandomPodsAndTablesMatchDirectEvaluation) {
  const std::string profile = "default-scheduler";
  RandomCluster rnd(20261129);
  ShimTable shim;
  std::string session = host_->handshake();
  size_t pods = 0, rejections = 0, scored = 0, resyncs = 0, score_errors = 0;

#ifdef SCHEDPLUG_SANITIZED_BUILD
  constexpr int kTables = 2;
#else
  constexpr int kTables = 8;
#endif
  for (int table = 0; table < kTables; ++table) {
    const size_t size = 20 + rnd.rng()() % 300;
    v1::NodeTableDelta delta = full_table(shim, rnd, size);
    ++resyncs;
    for (int i = 0; i < 300; ++i, ++pods) {
      rnd.known_nodes.clear();
      for (const auto& [slot, n] : shim.nodes)
        rnd.known_nodes.push_back(n.name());
      const v1::Pod pod = rnd.pod();

      v1::PreFilterRequest request;
      request.set_session_id(session);
      request.set_scheduler_name(profile);
      *request.mutable_pod() = pod;
      *request.mutable_delta() = delta;
      v1::PreFilterResponse response;
      grpc::ClientContext context;
      const grpc::Status status =
          host_->stub().PreFilter(&context, request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
      ASSERT_EQ(response.table_version(), shim.version);
      const PreFilterAnswer got = decode(response);
      const PreFilterAnswer want = direct_->prefilter(profile, pod, shim.nodes);
      ASSERT_EQ(got, want) << "table " << table << " pod " << i;
      rejections += got.rejected.size();

      // PreScore over the feasible nodes (as kube-scheduler would after
      // Filter), skipping pods whose filters errored (the cycle aborts).
      bool errored = false;
      for (const auto& [slot, r] : got.rejected)
        errored |= r.code == v1::CODE_ERROR;
      if (!errored) {
        v1::PreScoreRequest score_request;
        score_request.set_session_id(session);
        score_request.set_scheduler_name(profile);
        *score_request.mutable_pod() = pod;
        score_request.set_table_version(shim.version);
        std::vector<v1::Node> feasible;
        for (const auto& [slot, n] : shim.nodes) {
          if (got.rejected.contains(slot)) continue;
          score_request.add_nodes(slot);
          feasible.push_back(n);
        }
        v1::PreScoreResponse score_response;
        grpc::ClientContext score_context;
        const grpc::Status s = host_->stub().PreScore(
            &score_context, score_request, &score_response);
        ASSERT_TRUE(s.ok()) << s.error_message();
        const auto got_scores = decode(score_response);
        ASSERT_EQ(got_scores, direct_->prescore(profile, pod, feasible))
            << "table " << table << " pod " << i;
        for (const auto& p : got_scores) {
          score_errors += !p.error.empty();
          for (int64_t v : p.scores) ASSERT_TRUE(v >= 0 && v <= 100);
        }
        scored += feasible.size();
      }

      delta = random_delta(shim, rnd);
      // Now and then the host "forgets" the session (as after a restart):
      // the shim handshakes again and resyncs the full table.
      if (i == 150 && table % 2 == 1) {
        request.set_session_id("forgotten-session");
        *request.mutable_delta() = delta;
        grpc::ClientContext c2;
        v1::PreFilterResponse r2;
        const grpc::Status lost = host_->stub().PreFilter(&c2, request, &r2);
        ASSERT_EQ(lost.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
        session = host_->handshake();
        delta = full_table(shim, rnd, shim.nodes.size() + 3);
        ++resyncs;
      }
    }
  }
  std::cout << pods << " pods, " << rejections << " rejections, " << scored
            << " node scores, " << score_errors << " score errors, " << resyncs
            << " full tables\n";
  EXPECT_EQ(pods, size_t{kTables} * 300);
  EXPECT_GT(rejections, 0u);
  EXPECT_GT(scored, 0u);
  EXPECT_NE(host_->app().metrics().text().find("schedplug_resyncs_total"),
            std::string::npos);
}

TEST_F(Equivalence, TwoSchedulersHaveSeparateTables) {
  RandomCluster rnd(7);
  ShimTable a, b;
  const std::string sa = host_->handshake();
  const std::string sb = host_->handshake();
  ASSERT_NE(sa, sb);
  auto send = [&](const std::string& session, ShimTable& shim, size_t n) {
    v1::PreFilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name("default-scheduler");
    *request.mutable_pod() = rnd.pod();
    *request.mutable_delta() = full_table(shim, rnd, n);
    v1::PreFilterResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(host_->stub().PreFilter(&context, request, &response).ok());
    EXPECT_EQ(decode(response), direct_->prefilter("default-scheduler",
                                                   request.pod(), shim.nodes));
  };
  send(sa, a, 10);
  send(sb, b, 40);
  send(sa, a, 12);
}

}  // namespace
}  // namespace schedplug::host::testing
