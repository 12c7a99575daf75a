// The recent cycles behind Explain: what it holds equals what
// PreFilter and PreScore answered and what the plugins compute directly;
// what the shim reports became of a cycle (a later call's Placements, or
// NoteCycles) becomes its outcome; the caps drop the oldest cycles and say
// so.
// One file: the ExplainTest cases run cycles through run_cycle() on the
// fixture's 40-node host and check what Explain returns; the RecentCyclesTest
// cases check the store's cuts and caps directly.
#include <gtest/gtest.h>

#include "host/explain/recent_cycles.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

constexpr char kProfile[] = "default-scheduler";

class ExplainTest : public ::testing::Test {
 protected:
  void start(const std::function<void(HostOptions&)>& tweak = {}) {
    host_ = std::make_unique<RunningHost>(tweak);
    session_ = host_->handshake();
    rnd_.inject_errors = false;
    v1::NodeTableDelta full;
    full.set_full(true);
    full.set_new_version(1);
    for (uint32_t slot = 0; slot < 40; ++slot) {
      nodes_[slot] = rnd_.node(slot, "node-" + std::to_string(slot), 1);
      *full.add_upserts() = nodes_[slot];
    }
    pending_delta_ = full;
  }

  // One cycle as the shim runs it: PreFilter, then PreScore on the nodes
  // no filter rejected; `placed` rides on the PreFilter.
  struct Cycle {
    v1::Pod pod;
    v1::PreFilterResponse filtered;
    v1::PreScoreResponse scored;
    std::vector<uint32_t> feasible;
  };
  Cycle run_cycle(const std::vector<v1::Placement>& placed = {},
                  bool want_raw_scores = false) {
    Cycle c;
    c.pod = rnd_.pod();
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = c.pod;
    *request.mutable_delta() = pending_delta_;
    for (const v1::Placement& p : placed) *request.add_placed() = p;
    {
      grpc::ClientContext context;
      const grpc::Status s =
          host_->stub().PreFilter(&context, request, &c.filtered);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    pending_delta_ = v1::NodeTableDelta();
    pending_delta_.set_base_version(version_);
    pending_delta_.set_new_version(version_);
    const PreFilterAnswer answer = decode(c.filtered);
    for (const auto& [slot, node] : nodes_) {
      if (!answer.rejected.contains(slot)) c.feasible.push_back(slot);
    }
    v1::PreScoreRequest score;
    score.set_session_id(session_);
    score.set_scheduler_name(kProfile);
    *score.mutable_pod() = c.pod;
    score.set_table_version(version_);
    score.set_want_raw_scores(want_raw_scores);
    for (uint32_t slot : c.feasible) score.add_nodes(slot);
    grpc::ClientContext context;
    const grpc::Status s = host_->stub().PreScore(&context, score, &c.scored);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return c;
  }

  v1::ExplainResponse explain(const std::string& pod) {
    v1::ExplainRequest request;
    request.set_pod(pod);
    v1::ExplainResponse response;
    grpc::ClientContext context;
    const grpc::Status s = host_->stub().Explain(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  static std::string key(const v1::Pod& pod) {
    return pod.namespace_() + "/" + pod.name();
  }

  std::unique_ptr<RunningHost> host_;
  std::string session_;
  RandomCluster rnd_{20261203};
  std::map<uint32_t, v1::Node> nodes_;
  v1::NodeTableDelta pending_delta_;
  uint64_t version_ = 1;  // the table's, after pending_delta_
};

TEST_F(ExplainTest, HoldsTheVerdictsScoresAndReservedNodeOfEachCycle) {
  start();
  DirectEvaluator direct(host_->dir() / "scheduler-config.yaml",
                         test_plugin_dir());
  // Pods until one has both rejected and scored nodes.
  Cycle c;
  for (int i = 0; i < 50; ++i) {
    c = run_cycle();
    if (c.filtered.rejected_nodes_size() > 0 && c.feasible.size() > 1) break;
  }
  ASSERT_GT(c.filtered.rejected_nodes_size(), 0);
  ASSERT_GT(c.feasible.size(), 1u);
  const std::string chosen = nodes_[c.feasible.front()].name();
  run_cycle({[&] {
    v1::Placement p;
    p.set_pod_uid(c.pod.uid());
    p.set_node(chosen);
    return p;
  }()});

  for (const std::string& ask : {key(c.pod), c.pod.uid()}) {
    const v1::ExplainResponse r = explain(ask);
    ASSERT_EQ(r.cycles_size(), 1) << ask << ": " << r.not_held();
    const v1::ExplainedCycle& cycle = r.cycles(0);
    EXPECT_EQ(cycle.scheduler_name(), kProfile);
    EXPECT_EQ(cycle.pod_uid(), c.pod.uid());
    EXPECT_EQ(cycle.chosen_node(), chosen);
    EXPECT_EQ(cycle.nodes_filtered(), nodes_.size());
    EXPECT_EQ(std::vector<std::string>(cycle.filters().begin(),
                                       cycle.filters().end()),
              decode(c.filtered).plugins);

    // Rejections: what PreFilter answered and what the plugins say.
    const PreFilterAnswer direct_filter =
        direct.prefilter(kProfile, c.pod, nodes_);
    std::map<uint32_t, Rejection> kept;
    std::map<std::string, const v1::ExplainedNode*> scored;
    for (const v1::ExplainedNode& n : cycle.nodes()) {
      const uint32_t slot =
          static_cast<uint32_t>(std::stoul(n.node().substr(5)));
      if (n.rejected()) {
        kept[slot] = {cycle.filters(static_cast<int>(n.rejected_by())),
                      n.code(), n.reason()};
      } else {
        ASSERT_TRUE(n.scored());
        scored[n.node()] = &n;
      }
    }
    EXPECT_EQ(kept, decode(c.filtered).rejected);
    EXPECT_EQ(kept, direct_filter.rejected);

    // Scores: PreScore's answer, normalized, per plugin and node.
    std::vector<v1::Node> feasible_nodes;
    for (uint32_t slot : c.feasible) feasible_nodes.push_back(nodes_[slot]);
    const std::vector<ScoreAnswer> direct_scores =
        direct.prescore(kProfile, c.pod, feasible_nodes);
    const std::vector<ScoreAnswer> answered = decode(c.scored);
    ASSERT_EQ(scored.size(), c.feasible.size());
    ASSERT_EQ(cycle.scorers_size(), static_cast<int>(answered.size()));
    for (size_t p = 0; p < answered.size(); ++p) {
      EXPECT_EQ(cycle.scorers(static_cast<int>(p)), answered[p].plugin);
      EXPECT_EQ(cycle.scorer_skipped(static_cast<int>(p)), answered[p].skipped);
      EXPECT_EQ(cycle.weights(static_cast<int>(p)), 1);
      if (answered[p].skipped || !answered[p].error.empty()) continue;
      for (size_t k = 0; k < c.feasible.size(); ++k) {
        const v1::ExplainedNode& n = *scored.at(feasible_nodes[k].name());
        EXPECT_EQ(n.normalized(static_cast<int>(p)), answered[p].scores[k]);
        EXPECT_EQ(n.normalized(static_cast<int>(p)),
                  direct_scores[p].scores[k]);
      }
    }
    // Every plugin that ran has its hooks timed.
    std::set<std::string> timed;
    for (const v1::PluginTiming& t : cycle.timings()) {
      EXPECT_GE(t.nanos(), 0);
      timed.insert(t.plugin() + " " + t.hook());
    }
    for (int f = 0; f < cycle.filters_size(); ++f) {
      if (cycle.filter_skipped(f)) continue;
      EXPECT_TRUE(timed.contains(cycle.filters(f) + " filter"))
          << cycle.filters(f);
    }
  }
}

// A cycle keeps its nodes as table slots, named by the table's names of its
// own version: a later delta that puts other nodes in those slots changes
// nothing it shows.
TEST_F(ExplainTest, ACycleKeepsItsNodeNamesWhenLaterNodesReuseTheSlots) {
  start();
  const Cycle first = run_cycle();
  std::set<std::string> first_names;
  for (const auto& [slot, node] : nodes_) first_names.insert(node.name());
  v1::NodeTableDelta reuse;
  reuse.set_base_version(1);
  reuse.set_new_version(2);
  for (auto& [slot, node] : nodes_) {
    reuse.add_removed(slot);
    node = rnd_.node(slot, "other-" + std::to_string(slot), 1);
    *reuse.add_upserts() = node;
  }
  pending_delta_ = reuse;
  version_ = 2;
  const Cycle second = run_cycle();

  auto shown = [&](const v1::Pod& pod) {
    const v1::ExplainResponse r = explain(key(pod));
    EXPECT_EQ(r.cycles_size(), 1) << r.not_held();
    std::set<std::string> names;
    if (r.cycles_size() != 1) return names;
    for (const v1::ExplainedNode& n : r.cycles(0).nodes())
      names.insert(n.node());
    return names;
  };
  EXPECT_EQ(shown(first.pod), first_names);
  std::set<std::string> second_names;
  for (const auto& [slot, node] : nodes_) second_names.insert(node.name());
  EXPECT_EQ(shown(second.pod), second_names);
}

// PreScoreRequest.want_raw_scores (the shim's simulator annotations): each
// plugin that scored sends its raw scores too, the ones the host keeps;
// with explain off as well, and none when not asked.
TEST_F(ExplainTest, RawScoresOnRequestAreTheKeptOnes) {
  start();
  Cycle c;
  for (int i = 0; i < 50; ++i) {
    c = run_cycle({}, /*want_raw_scores=*/true);
    if (c.feasible.size() > 1) break;
  }
  ASSERT_GT(c.feasible.size(), 1u);
  const v1::ExplainResponse r = explain(c.pod.uid());
  ASSERT_EQ(r.cycles_size(), 1) << r.not_held();
  std::map<std::string, const v1::ExplainedNode*> kept;
  for (const v1::ExplainedNode& n : r.cycles(0).nodes()) {
    if (n.scored()) kept[n.node()] = &n;
  }
  int compared = 0;
  for (int p = 0; p < c.scored.plugins_size(); ++p) {
    const v1::PluginScores& ps = c.scored.plugins(p);
    ASSERT_EQ(ps.raw_size(), ps.scores_size()) << ps.plugin();
    for (int k = 0; k < ps.raw_size(); ++k) {
      const std::string& node =
          nodes_[c.feasible[static_cast<size_t>(k)]].name();
      EXPECT_EQ(ps.raw(k), kept.at(node)->raw(p))
          << ps.plugin() << " on " << node;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);

  start([](HostOptions& o) { o.service.recent_cycles.max_cycles = 0; });
  const Cycle asked = run_cycle({}, /*want_raw_scores=*/true);
  const Cycle plain = run_cycle();
  for (const Cycle* cycle : {&asked, &plain}) {
    for (const v1::PluginScores& ps : cycle->scored.plugins()) {
      EXPECT_EQ(ps.raw_size(), cycle == &asked ? ps.scores_size() : 0)
          << ps.plugin();
    }
  }
}

// Scores ahead (PreFilter's score_ahead) are held raw and shown only once
// the shim says which of the nodes kube-scheduler scored (Placement.scored):
// then those nodes, normalized over them as a PreScore of exactly them is.
TEST_F(ExplainTest, ScoresAheadAreNormalizedOverTheNodesTheShimReports) {
  start();
  DirectEvaluator direct(host_->dir() / "scheduler-config.yaml",
                         test_plugin_dir());
  v1::Pod pod;
  v1::PreFilterResponse filtered;
  for (int i = 0; i < 50 && filtered.scores_ahead().nodes_size() < 6; ++i) {
    pod = rnd_.pod();
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = pod;
    *request.mutable_delta() = pending_delta_;
    request.set_score_ahead(true);
    grpc::ClientContext context;
    filtered.Clear();
    const grpc::Status s =
        host_->stub().PreFilter(&context, request, &filtered);
    ASSERT_TRUE(s.ok()) << s.error_message();
    pending_delta_ = v1::NodeTableDelta();
    pending_delta_.set_base_version(version_);
    pending_delta_.set_new_version(version_);
  }
  const v1::ScoresAhead& ahead = filtered.scores_ahead();
  ASSERT_GE(ahead.nodes_size(), 6);
  const v1::ExplainResponse before = explain(pod.uid());
  ASSERT_EQ(before.cycles_size(), 1);
  for (const v1::ExplainedNode& n : before.cycles(0).nodes()) {
    EXPECT_FALSE(n.scored()) << n.node() << ": shown before the shim said";
  }

  // kube-scheduler scored every other node scored ahead.
  v1::Placement placement;
  placement.set_pod_uid(pod.uid());
  std::vector<v1::Node> scored_nodes;
  for (int k = 0; k < ahead.nodes_size(); k += 2) {
    placement.add_scored(static_cast<uint32_t>(k));
    scored_nodes.push_back(nodes_[ahead.nodes(k)]);
  }
  run_cycle({placement});
  const std::vector<ScoreAnswer> want =
      direct.prescore(kProfile, pod, scored_nodes);
  const v1::ExplainResponse after = explain(pod.uid());
  ASSERT_EQ(after.cycles_size(), 1);
  const v1::ExplainedCycle& cycle = after.cycles(0);
  std::map<std::string, const v1::ExplainedNode*> shown;
  for (const v1::ExplainedNode& n : cycle.nodes()) {
    if (n.scored()) shown[n.node()] = &n;
  }
  ASSERT_EQ(shown.size(), scored_nodes.size());
  size_t checked = 0;
  for (int p = 0; p < ahead.plugins_size(); ++p) {
    const v1::PluginScores& a = ahead.plugins(p);
    if (a.normalization() == v1::NORMALIZATION_BY_PLUGIN || a.skipped() ||
        !a.error().empty() || !want[static_cast<size_t>(p)].error.empty()) {
      continue;  // the shim asks PreScore for such a plugin
    }
    for (size_t k = 0; k < scored_nodes.size(); ++k) {
      const v1::ExplainedNode& n = *shown.at(scored_nodes[k].name());
      EXPECT_EQ(n.raw(p), a.raw(static_cast<int>(2 * k)));
      EXPECT_EQ(n.normalized(p), want[static_cast<size_t>(p)].scores[k])
          << a.plugin() << " on " << scored_nodes[k].name();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

// What became of each cycle reaches the recent cycles with NoteCycles, without
// a later cycle's call: the node reserved, a reservation undone, or no node
// found with what kube-scheduler's filters said. The Handshake offers it;
// notes from an unknown session are refused and change nothing.
TEST_F(ExplainTest, NotesSayWhatBecameOfEachCycle) {
  start();
  {
    grpc::ClientContext context;
    v1::HandshakeResponse hs;
    ASSERT_TRUE(
        host_->stub().Handshake(&context, test_handshake_request(), &hs).ok());
    EXPECT_TRUE(hs.cycle_notes());
  }
  const Cycle placed = run_cycle();
  const Cycle undone = run_cycle();
  const Cycle pending = run_cycle();
  auto note = [](const Cycle& c, const std::string& node) {
    v1::Placement p;
    p.set_pod_uid(c.pod.uid());
    p.set_node(node);
    return p;
  };
  const std::string message =
      "0/40 nodes are available: 3 Insufficient cpu, 37 node(s) didn't match "
      "Pod's node affinity/selector.";
  v1::CycleNotes notes;
  notes.set_session_id("no-such-session");
  *notes.add_placed() = note(placed, "node-3");
  {
    grpc::ClientContext context;
    v1::CycleNotesResponse response;
    const grpc::Status s = host_->stub().NoteCycles(&context, notes, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  EXPECT_EQ(explain(placed.pod.uid()).cycles(0).chosen_node(), "");

  notes.set_session_id(session_);
  *notes.add_placed() = note(undone, "node-4");
  v1::Placement unreserved = note(undone, "node-4");
  unreserved.set_unreserved(true);
  *notes.add_placed() = unreserved;
  v1::Placement failed = note(pending, "");
  failed.set_unschedulable(true);
  failed.set_message(message);
  *notes.add_placed() = failed;
  {
    grpc::ClientContext context;
    v1::CycleNotesResponse response;
    const grpc::Status s = host_->stub().NoteCycles(&context, notes, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_NE(response.identity().epoch(), 0u);
  }

  const v1::ExplainedCycle p = explain(placed.pod.uid()).cycles(0);
  EXPECT_EQ(p.chosen_node(), "node-3");
  EXPECT_FALSE(p.unreserved());
  EXPECT_FALSE(p.unschedulable());
  EXPECT_EQ(p.nodes_rejected(),
            static_cast<uint32_t>(placed.filtered.rejected_nodes_size()));
  const v1::ExplainedCycle u = explain(undone.pod.uid()).cycles(0);
  EXPECT_EQ(u.chosen_node(), "node-4");
  EXPECT_TRUE(u.unreserved());
  EXPECT_FALSE(u.unschedulable());
  const v1::ExplainedCycle f = explain(pending.pod.uid()).cycles(0);
  EXPECT_EQ(f.chosen_node(), "");
  EXPECT_FALSE(f.unreserved());
  EXPECT_TRUE(f.unschedulable());
  EXPECT_EQ(f.unschedulable_message(), message);

  // A note that the pod found no node does not undo a reservation that
  // stands.
  v1::CycleNotes late;
  late.set_session_id(session_);
  v1::Placement late_failed = note(placed, "");
  late_failed.set_unschedulable(true);
  *late.add_placed() = late_failed;
  grpc::ClientContext context;
  v1::CycleNotesResponse response;
  ASSERT_TRUE(host_->stub().NoteCycles(&context, late, &response).ok());
  EXPECT_FALSE(explain(placed.pod.uid()).cycles(0).unschedulable());
}

// kube-scheduler's message is kept whole up to 4 KiB, then cut at a
// character boundary.
TEST(RecentCyclesTest, ALongMessageIsCutBetweenCharacters) {
  RecentCycles recent;
  CycleSummary c;
  c.scheduler_name = kProfile;
  c.pod_namespace = "ns";
  c.pod_name = "pod";
  c.pod_uid = "uid-1";
  recent.add("s", true, std::move(c));
  std::string message(4095, 'x');
  message += "\xc3\xa9";  // é across the 4096-byte mark
  recent.unschedulable("uid-1", message);
  const RecentCycles::Found found = recent.find("uid-1");
  ASSERT_EQ(found.cycles.size(), 1u);
  EXPECT_EQ(found.cycles[0].unschedulable_message(), std::string(4095, 'x'));
}

TEST_F(ExplainTest, SaysWhenThePodWasNeverSeen) {
  start();
  run_cycle();
  const v1::ExplainResponse r = explain("default/nobody");
  EXPECT_EQ(r.cycles_size(), 0);
  EXPECT_NE(r.not_held().find("holds no cycle of pod \"default/nobody\""),
            std::string::npos)
      << r.not_held();
}

TEST_F(ExplainTest, TheCountCapDropsTheOldestAndSaysWhich) {
  start([](HostOptions& o) { o.service.recent_cycles.max_cycles = 2; });
  const Cycle first = run_cycle();
  run_cycle();
  const Cycle third = run_cycle();
  EXPECT_EQ(explain(third.pod.uid()).cycles_size(), 1);
  const v1::ExplainResponse r = explain(key(first.pod));
  EXPECT_EQ(r.cycles_size(), 0);
  EXPECT_NE(r.not_held().find("keeps the latest 2 cycles (--explain-cycles)"),
            std::string::npos)
      << r.not_held();
  const std::string metrics = host_->app().metrics().text();
  EXPECT_NE(metrics.find("schedplug_recent_cycles 2"), std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("schedplug_recent_cycles_dropped_total{cap=\"cycles\"} 1"),
      std::string::npos)
      << metrics;
}

TEST_F(ExplainTest, TheMemoryCapKeepsOnlyTheNewest) {
  start([](HostOptions& o) { o.service.recent_cycles.max_bytes = 1; });
  const Cycle first = run_cycle();
  const Cycle second = run_cycle();
  EXPECT_EQ(explain(second.pod.uid()).cycles_size(), 1);
  const v1::ExplainResponse r = explain(first.pod.uid());
  EXPECT_EQ(r.cycles_size(), 0);
  EXPECT_NE(r.not_held().find("--explain-memory"), std::string::npos)
      << r.not_held();
}

// A cycle's parts (PreFilter's rejections, then the scores ahead of the
// nodes it let through) share the per-cycle node cap: the nodes over it
// are counted, and the names, reasons and scores kept stay together.
TEST(RecentCyclesTest, PartsShareTheNodeCapAndKeepTheirNames) {
  RecentCycles recent({.max_cycles = 10,
                       .max_bytes = size_t{1} << 20,
                       .max_nodes_per_cycle = 3});
  auto part = [] {
    CycleSummary p;
    p.scheduler_name = kProfile;
    p.pod_namespace = "ns";
    p.pod_name = "pod";
    p.pod_uid = "uid-1";
    return p;
  };
  CycleSummary filters = part();
  filters.filters = {"F"};
  filters.filter_skipped = {false};
  filters.reasons = {"no"};
  for (const char* node : {"a", "b"}) {
    filters.rejections.push_back({.node = filters.add_name(node),
                                  .reason = 0,
                                  .plugin = 0,
                                  .code = SCHEDPLUG_UNSCHEDULABLE});
  }
  recent.add("s", true, std::move(filters));
  CycleSummary scores = part();
  scores.scorers = {"S1", "S2"};
  scores.scorer_skipped = {false, false};
  scores.weights = {1, 1};
  scores.scorer_errors = {"", ""};
  for (const char* node : {"c", "d"}) {
    scores.scored.push_back(scores.add_name(node));
  }
  scores.raw = {1, 2, 3, 4};
  scores.normalized = {10, 20, 30, 40};
  recent.add("s", false, std::move(scores));

  const RecentCycles::Found found = recent.find("ns/pod");
  ASSERT_EQ(found.cycles.size(), 1u);
  const v1::ExplainedCycle& c = found.cycles[0];
  EXPECT_EQ(c.nodes_left_out(), 1u);
  ASSERT_EQ(c.nodes_size(), 3);
  EXPECT_EQ(c.nodes(0).node(), "a");
  EXPECT_EQ(c.nodes(0).reason(), "no");
  EXPECT_EQ(c.nodes(1).node(), "b");
  EXPECT_EQ(c.nodes(2).node(), "c");
  EXPECT_TRUE(c.nodes(2).scored());
  EXPECT_EQ(
      std::vector<int64_t>(c.nodes(2).raw().begin(), c.nodes(2).raw().end()),
      (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::vector<int64_t>(c.nodes(2).normalized().begin(),
                                 c.nodes(2).normalized().end()),
            (std::vector<int64_t>{10, 20}));
}

TEST_F(ExplainTest, TurnedOffItSaysHowToTurnItOn) {
  start([](HostOptions& o) { o.service.recent_cycles.max_cycles = 0; });
  const Cycle c = run_cycle();
  const v1::ExplainResponse r = explain(c.pod.uid());
  EXPECT_EQ(r.cycles_size(), 0);
  EXPECT_NE(r.not_held().find("--explain-cycles 0"), std::string::npos)
      << r.not_held();
}

}  // namespace
}  // namespace schedplug::host::testing
