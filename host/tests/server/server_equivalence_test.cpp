// A C++ client drives the real server over a unix socket. For thousands of
// random pods over random node tables that change by deltas (updates,
// removals, slot reuse) and are resynced now and then, every PreFilter and
// PreScore answer must equal the direct in-process evaluation.
#include <gtest/gtest.h>

#include <set>

#include "schedplug/runtime.hpp"
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

  // Fewer pods under the sanitizers, where each costs many times more: the
  // test must stay well inside ctest's timeout while other tests share the
  // cores.
#ifdef SCHEDPLUG_SANITIZED_BUILD
  constexpr int kTables = 2;
  constexpr int kPodsPerTable = 120;
#else
  constexpr int kTables = 8;
  constexpr int kPodsPerTable = 300;
#endif
  for (int table = 0; table < kTables; ++table) {
    const size_t size = 20 + rnd.rng()() % 300;
    v1::NodeTableDelta delta = full_table(shim, rnd, size);
    ++resyncs;
    for (int i = 0; i < kPodsPerTable; ++i, ++pods) {
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
      if (i == kPodsPerTable / 2 && table % 2 == 1) {
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
  EXPECT_EQ(pods, size_t{kTables} * kPodsPerTable);
  EXPECT_GT(rejections, 0u);
  EXPECT_GT(scored, 0u);
  EXPECT_NE(host_->app().metrics().text().find("schedplug_resyncs_total"),
            std::string::npos);
}

// Scores ahead (PreFilter's score_ahead): the raw scores of exactly the
// evaluated nodes no filter rejected, and, normalized over any subset of
// them by their policy (what the shim does), the scores a PreScore of that
// subset gives. A plugin with its own normalize_score gives no raw scores.
TEST_F(Equivalence, ScoresAheadNormalizedOverAnySubsetArePreScores) {
  const std::string profile = "default-scheduler";
  {
    v1::HandshakeResponse hello;
    grpc::ClientContext context;
    ASSERT_TRUE(host_->stub()
                    .Handshake(&context, test_handshake_request(), &hello)
                    .ok());
    EXPECT_TRUE(hello.scores_ahead());
    std::map<std::string, bool> own;
    for (const v1::PluginInfo& info : hello.plugins())
      own[info.name()] = info.has_normalize_score();
    EXPECT_TRUE(own.at("SpreadScore"));
    EXPECT_FALSE(own.at("FreeCpu"));
    EXPECT_FALSE(own.at("Latency"));
  }
  RandomCluster rnd(20261204);
  ShimTable shim;
  const std::string session = host_->handshake();
  v1::NodeTableDelta delta = full_table(shim, rnd, 120);
  size_t compared = 0, own = 0;
  for (int i = 0; i < 200; ++i) {
    rnd.known_nodes.clear();
    for (const auto& [slot, n] : shim.nodes)
      rnd.known_nodes.push_back(n.name());
    const v1::Pod pod = rnd.pod();
    v1::PreFilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name(profile);
    *request.mutable_pod() = pod;
    *request.mutable_delta() = delta;
    request.set_score_ahead(true);
    const uint32_t first = static_cast<uint32_t>(rnd.rng()() % 60);
    if (i % 2 == 1) {  // a window of the table
      request.add_evaluate(first);
      request.add_evaluate(first + 50);
    }
    v1::PreFilterResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(host_->stub().PreFilter(&context, request, &response).ok());
    const std::map<uint32_t, v1::Node> table = shim.nodes;
    delta = random_delta(shim, rnd);  // for the next pod
    const PreFilterAnswer verdicts = decode(response);
    std::vector<uint32_t> want_nodes;
    bool errored = false;
    for (const auto& [slot, n] : table) {
      (void)n;
      if (i % 2 == 1 && (slot < first || slot >= first + 50)) continue;
      if (!verdicts.rejected.contains(slot)) want_nodes.push_back(slot);
    }
    for (const auto& [slot, r] : verdicts.rejected)
      errored |= r.code == v1::CODE_ERROR;
    if (errored || !response.unfinished().empty()) continue;
    const v1::ScoresAhead& ahead = response.scores_ahead();
    ASSERT_EQ(std::vector<uint32_t>(ahead.nodes().begin(), ahead.nodes().end()),
              want_nodes)
        << "pod " << i;
    // kube-scheduler's feasible nodes: some of them (its own filters
    // rejected the others).
    std::vector<int> positions;
    v1::PreScoreRequest score_request;
    score_request.set_session_id(session);
    score_request.set_scheduler_name(profile);
    *score_request.mutable_pod() = pod;
    score_request.set_table_version(response.table_version());
    for (int k = 0; k < ahead.nodes_size(); ++k) {
      if (rnd.rng()() % 4 == 0) continue;
      positions.push_back(k);
      score_request.add_nodes(ahead.nodes(k));
    }
    if (positions.empty()) continue;
    v1::PreScoreResponse score_response;
    grpc::ClientContext score_context;
    ASSERT_TRUE(host_->stub()
                    .PreScore(&score_context, score_request, &score_response)
                    .ok());
    ASSERT_EQ(ahead.plugins_size(), score_response.plugins_size());
    for (int p = 0; p < ahead.plugins_size(); ++p) {
      const v1::PluginScores& a = ahead.plugins(p);
      const v1::PluginScores& want = score_response.plugins(p);
      EXPECT_EQ(a.plugin(), want.plugin());
      EXPECT_EQ(a.skipped(), want.skipped());
      if (a.skipped() || !a.error().empty()) continue;
      if (a.normalization() == v1::NORMALIZATION_BY_PLUGIN) {
        EXPECT_TRUE(a.raw().empty()) << a.plugin();
        ++own;
        continue;
      }
      ASSERT_EQ(a.raw_size(), ahead.nodes_size()) << a.plugin();
      std::vector<std::string> names;
      for (int k : positions) names.push_back(table.at(ahead.nodes(k)).name());
      std::vector<schedplug_node_score> scores;
      for (size_t j = 0; j < positions.size(); ++j) {
        scores.push_back(
            {schedplug_str_of(names[j].c_str()), a.raw(positions[j])});
      }
      const uint32_t policy = a.normalization() == v1::NORMALIZATION_LINEAR
                                  ? SCHEDPLUG_NORMALIZE_LINEAR
                              : a.normalization() == v1::NORMALIZATION_REVERSE
                                  ? SCHEDPLUG_NORMALIZE_REVERSE
                                  : SCHEDPLUG_NORMALIZE_NONE;
      runtime::apply_policy(policy, scores);
      const std::string error =
          runtime::out_of_range(a.plugin(), false, scores);
      EXPECT_EQ(error, want.error()) << a.plugin() << " pod " << i;
      if (!error.empty()) continue;
      std::vector<int64_t> got;
      for (const auto& s : scores) got.push_back(s.score);
      EXPECT_EQ(
          got, std::vector<int64_t>(want.scores().begin(), want.scores().end()))
          << a.plugin() << " pod " << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100u);
  EXPECT_GT(own, 0u);
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
