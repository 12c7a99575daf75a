// PreFilter's `evaluate` window and FilterNodes: a windowed PreFilter
// answers only inside its window, FilterNodes answers the rest of the same
// cycle with the cycle's per-pod states (no second pod_begin), and the two
// together give the verdicts of an unwindowed PreFilter. The table never
// changes under FilterNodes. PodCycle (plugins/pod_cycle.c) logs every
// pod_begin / pod_end and names its state in its reasons.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "host/chain/filter_chain.hpp"
#include "host/pipeline/node_window.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using grpc::StatusCode;

constexpr uint32_t kSlots = 40;
constexpr uint32_t kHole = 7;  // an empty slot of the table

std::vector<std::string> log_lines(const std::filesystem::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The rejections of `answer` whose slot is in [first, end) pairs `ranges`.
std::map<uint32_t, Rejection> inside(const PreFilterAnswer& answer,
                                     const std::vector<uint32_t>& ranges) {
  std::map<uint32_t, Rejection> out;
  for (const auto& [slot, rejection] : answer.rejected) {
    for (size_t i = 0; i + 1 < ranges.size(); i += 2) {
      if (slot >= ranges[i] && slot < ranges[i + 1]) {
        out[slot] = rejection;
        break;
      }
    }
  }
  return out;
}

// The slots of some rejections (PodCycle's reasons name the cycle's
// state, which differs between PreFilters).
std::set<uint32_t> slots(const std::map<uint32_t, Rejection>& rejected) {
  std::set<uint32_t> out;
  for (const auto& [slot, r] : rejected) out.insert(slot);
  return out;
}

class FilterNodes : public ::testing::Test {
 protected:
  FilterNodes()
      : host_(std::make_unique<RunningHost>(
            nullptr, TestConfigOptions{.pod_cycle_log = log_file_})) {
    session_ = host_->handshake();
    // kSlots random nodes (one slot empty); every third one is labelled
    // "reject", which PodCycle rejects.
    RandomCluster rnd(11);
    rnd.inject_errors = false;
    for (uint32_t slot = 0; slot < kSlots; ++slot) {
      if (slot == kHole) continue;
      v1::Node n = rnd.node(slot, "n" + std::to_string(slot), 1);
      if (slot % 3 == 0) n.add_labels()->set_key("reject");
      nodes_[slot] = n;
    }
  }

  // PreFilter of `pod` on the table (sent in full with the session's first
  // call, at version 1), only on the `evaluate` slots when not empty.
  v1::PreFilterResponse prefilter(const std::string& profile,
                                  const v1::Pod& pod,
                                  const std::vector<uint32_t>& evaluate = {},
                                  uint32_t feasible_target = 0) {
    v1::PreFilterRequest request;
    request.set_feasible_target(feasible_target);
    request.set_session_id(session_);
    request.set_scheduler_name(profile);
    *request.mutable_pod() = pod;
    v1::NodeTableDelta* d = request.mutable_delta();
    if (!table_sent_) {
      table_sent_ = true;
      d->set_full(true);
      d->set_new_version(1);
      for (const auto& [slot, n] : nodes_) *d->add_upserts() = n;
    } else {
      d->set_base_version(1);
      d->set_new_version(1);
    }
    for (uint32_t s : evaluate) request.add_evaluate(s);
    v1::PreFilterResponse response;
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().PreFilter(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  v1::FilterNodesRequest filter_nodes_request(
      const std::string& profile, const v1::Pod& pod,
      const std::vector<uint32_t>& evaluate, uint64_t version = 1) {
    v1::FilterNodesRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(profile);
    *request.mutable_pod() = pod;
    request.set_table_version(version);
    for (uint32_t s : evaluate) request.add_evaluate(s);
    return request;
  }

  grpc::Status call(const v1::FilterNodesRequest& request,
                    v1::PreFilterResponse* response) {
    grpc::ClientContext c;
    return host_->stub().FilterNodes(&c, request, response);
  }

  v1::PreFilterResponse filter_nodes(const std::string& profile,
                                     const v1::Pod& pod,
                                     const std::vector<uint32_t>& evaluate) {
    v1::PreFilterResponse response;
    const grpc::Status s =
        call(filter_nodes_request(profile, pod, evaluate), &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  // PodCycle's score for `pod` (on slot 1): the number of its state.
  int64_t prescore_state(const v1::Pod& pod) {
    v1::PreScoreRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name("podcycle-scheduler");
    *request.mutable_pod() = pod;
    request.set_table_version(1);
    request.add_nodes(1);
    v1::PreScoreResponse response;
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().PreScore(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (response.plugins_size() != 1 ||
        response.plugins(0).scores_size() != 1) {
      ADD_FAILURE() << response.ShortDebugString();
      return -1;
    }
    return response.plugins(0).scores(0);
  }

  static v1::Pod cycle_pod(const std::string& name) {
    v1::Pod p;
    p.set_namespace_("ns");
    p.set_name(name);
    p.set_uid("uid-" + name);
    return p;
  }

  TempDir log_dir_;
  std::filesystem::path log_file_ = log_dir_.path() / "pod_cycle.log";
  std::unique_ptr<RunningHost> host_;
  std::string session_;
  std::map<uint32_t, v1::Node> nodes_;
  bool table_sent_ = false;
};

TEST_F(FilterNodes, WindowedPreFilterAnswersOnlyInsideTheWindow) {
  const DirectEvaluator direct(host_->dir() / "scheduler-config.yaml",
                               test_plugin_dir());
  // A window that wraps around the table's end (slots past it ignored),
  // with an overlap.
  const std::vector<uint32_t> window = {30, 100, 3, 12, 8, 10};
  RandomCluster rnd(5);
  rnd.inject_errors = false;
  size_t rejected_inside = 0, rejected_outside = 0;
  for (int i = 0; i < 20; ++i) {
    const v1::Pod pod = rnd.pod();
    const v1::PreFilterResponse all = prefilter("default-scheduler", pod);
    EXPECT_FALSE(all.windowed());
    const PreFilterAnswer every = decode(all);
    // Without `evaluate`, the verdicts of every node, as before.
    EXPECT_EQ(every, direct.prefilter("default-scheduler", pod, nodes_));

    const v1::PreFilterResponse some =
        prefilter("default-scheduler", pod, window);
    EXPECT_TRUE(some.windowed());
    EXPECT_EQ(some.table_version(), 1u);
    const PreFilterAnswer windowed = decode(some);
    EXPECT_EQ(windowed.plugins, every.plugins);
    EXPECT_EQ(windowed.skipped, every.skipped);
    EXPECT_EQ(windowed.rejected, inside(every, window))
        << "pod " << pod.ShortDebugString();
    rejected_inside += windowed.rejected.size();
    rejected_outside += every.rejected.size() - windowed.rejected.size();
  }
  // Both kinds happened, so the comparisons above meant something.
  EXPECT_GT(rejected_inside, 0u);
  EXPECT_GT(rejected_outside, 0u);
}

TEST_F(FilterNodes, TheRestOfTheTableCompletesAWindowedPreFilter) {
  RandomCluster rnd(6);
  rnd.inject_errors = false;
  for (int i = 0; i < 20; ++i) {
    const v1::Pod pod = rnd.pod();
    const PreFilterAnswer every = decode(prefilter("default-scheduler", pod));
    const v1::PreFilterResponse first =
        prefilter("default-scheduler", pod, {12, 25});
    const v1::PreFilterResponse rest =
        filter_nodes("default-scheduler", pod, {25, kSlots, 0, 12});
    EXPECT_TRUE(rest.windowed());
    EXPECT_EQ(rest.table_version(), 1u);
    const PreFilterAnswer a = decode(first), b = decode(rest);
    EXPECT_EQ(b.plugins, every.plugins);
    EXPECT_EQ(b.skipped, every.skipped);
    EXPECT_EQ(rest.applies_reported(), first.applies_reported());
    EXPECT_EQ(std::vector<std::string>(rest.not_applying().begin(),
                                       rest.not_applying().end()),
              std::vector<std::string>(first.not_applying().begin(),
                                       first.not_applying().end()));
    std::map<uint32_t, Rejection> both = a.rejected;
    for (const auto& [slot, r] : b.rejected) {
      EXPECT_TRUE(slot < 12 || slot >= 25) << "slot " << slot;
      both[slot] = r;
    }
    EXPECT_EQ(both, every.rejected) << "pod " << pod.ShortDebugString();
  }
}

TEST_F(FilterNodes, AFeasibleTargetStopsTheWalkOnceEnoughNodesPassed) {
  const v1::Pod p = cycle_pod("p");
  // The walk starts at slot 20 and wraps; PodCycle rejects every third
  // slot and slot 7 is empty.
  const std::vector<uint32_t> walk = {20, kSlots, 0, 20};
  const PreFilterAnswer every = decode(prefilter("podcycle-scheduler", p));

  // Six must pass: the first step takes six slots (20-25), of which two
  // are rejected; the second takes the rest of the way, sized by that
  // share with some to spare: 19 more, to slot 4.
  const v1::PreFilterResponse some =
      prefilter("podcycle-scheduler", p, walk, 6);
  EXPECT_TRUE(some.windowed());
  const std::vector<uint32_t> want = {20, kSlots, 0, 5};
  EXPECT_EQ(
      std::vector<uint32_t>(some.evaluated().begin(), some.evaluated().end()),
      want);
  const PreFilterAnswer walked = decode(some);
  EXPECT_EQ(slots(walked.rejected), slots(inside(every, want)));
  EXPECT_EQ(walked.rejected.size(), 9u);  // 21, 24, ..., 39, 0, 3
  // One reason, though two steps found it.
  EXPECT_EQ(some.reasons_size(), 1);

  // A target the walk cannot meet: every slot of it, as without one.
  const v1::PreFilterResponse all =
      prefilter("podcycle-scheduler", p, walk, 1000);
  EXPECT_EQ(
      std::vector<uint32_t>(all.evaluated().begin(), all.evaluated().end()),
      walk);
  EXPECT_EQ(slots(decode(all).rejected), slots(every.rejected));
  // Without a target, the whole window and no `evaluated`.
  const v1::PreFilterResponse window =
      prefilter("podcycle-scheduler", p, {20, 30});
  EXPECT_EQ(window.evaluated_size(), 0);
  EXPECT_EQ(slots(decode(window).rejected), slots(inside(every, {20, 30})));
}

TEST_F(FilterNodes, ReusesTheCyclesPodStatesAndLeavesTheCycle) {
  const v1::Pod p = cycle_pod("p");
  const v1::PreFilterResponse first =
      prefilter("podcycle-scheduler", p, {0, 10});
  EXPECT_TRUE(first.windowed());
  EXPECT_EQ(decode(first).rejected.size(), 4u);  // slots 0, 3, 6, 9
  EXPECT_EQ(log_lines(log_file_), std::vector<std::string>{"begin p 1"});

  const v1::PreFilterResponse rest =
      filter_nodes("podcycle-scheduler", p, {10, kSlots});
  // The cycle's state 1: no pod_begin, no pod_end.
  ASSERT_EQ(rest.reasons_size(), 1);
  EXPECT_EQ(rest.reasons(0), "node(s) reject p (state 1)");
  EXPECT_EQ(log_lines(log_file_), std::vector<std::string>{"begin p 1"});
  EXPECT_TRUE(rest.applies_reported());
  std::set<uint32_t> rejected;
  for (uint32_t slot : rest.rejected_nodes()) rejected.insert(slot);
  for (uint32_t slot : first.rejected_nodes()) rejected.insert(slot);
  std::set<uint32_t> labelled;
  for (uint32_t slot = 0; slot < kSlots; slot += 3) labelled.insert(slot);
  EXPECT_EQ(rejected, labelled);

  // PreScore of the same cycle still finds it, and ends it.
  EXPECT_EQ(prescore_state(p), 1);
  EXPECT_EQ(log_lines(log_file_),
            (std::vector<std::string>{"begin p 1", "end p 1"}));
}

TEST_F(FilterNodes, WithoutTheCycleThePodIsBegunForTheCall) {
  const v1::Pod p = cycle_pod("p");
  prefilter("podcycle-scheduler", p, {0, 10});
  // Another pod: its own state, begun and ended within the call; p's
  // cycle stays the session's.
  const v1::PreFilterResponse other =
      filter_nodes("podcycle-scheduler", cycle_pod("x"), {0, kSlots});
  ASSERT_EQ(other.reasons_size(), 1);
  EXPECT_EQ(other.reasons(0), "node(s) reject x (state 2)");
  EXPECT_FALSE(other.applies_reported());
  EXPECT_TRUE(other.windowed());
  EXPECT_EQ(other.rejected_nodes_size(), 14);
  EXPECT_EQ(log_lines(log_file_),
            (std::vector<std::string>{"begin p 1", "begin x 2", "end x 2"}));
  EXPECT_EQ(prescore_state(p), 1);

  // A plugin without pod_begin: the shim's gates when it sends them.
  v1::FilterNodesRequest request =
      filter_nodes_request("applies-scheduler", cycle_pod("b"), {0, kSlots});
  request.set_applies_known(true);
  request.add_not_applying("AppliesCounter");
  v1::PreFilterResponse response;
  ASSERT_TRUE(call(request, &response).ok());
  ASSERT_EQ(response.plugins_size(), 2);
  EXPECT_EQ(response.plugins(0), "AppliesCounter");
  EXPECT_TRUE(response.skipped(0)) << response.ShortDebugString();
}

TEST_F(FilterNodes, RefusalsLeaveTheTableAndTheCycle) {
  const v1::Pod p = cycle_pod("p");
  prefilter("podcycle-scheduler", p, {0, 10});
  auto expect_refused = [&](const v1::FilterNodesRequest& request,
                            StatusCode code, const std::string& words) {
    v1::PreFilterResponse response;
    const grpc::Status s = call(request, &response);
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(words), std::string::npos)
        << s.error_message();
  };
  expect_refused(filter_nodes_request("podcycle-scheduler", p, {10, 20}, 2),
                 StatusCode::FAILED_PRECONDITION,
                 "the node table is at version 1, the FilterNodes request is "
                 "for version 2");
  expect_refused(filter_nodes_request("podcycle-scheduler", p, {}),
                 StatusCode::INVALID_ARGUMENT,
                 "FilterNodes: evaluate is empty");
  expect_refused(filter_nodes_request("podcycle-scheduler", p, {10, 20, 30}),
                 StatusCode::INVALID_ARGUMENT,
                 "evaluate holds 3 numbers, an odd count");
  expect_refused(filter_nodes_request("podcycle-scheduler", p, {10, 20, 5, 5}),
                 StatusCode::INVALID_ARGUMENT,
                 "evaluate pair 1 is [5, 5), an empty range");
  expect_refused(filter_nodes_request("podcycle-scheduler", p, {20, 10}),
                 StatusCode::INVALID_ARGUMENT, "evaluate pair 0 is [20, 10)");
  expect_refused(filter_nodes_request("no-such-profile", p, {10, 20}),
                 StatusCode::INVALID_ARGUMENT,
                 "unknown profile \"no-such-profile\"");
  v1::FilterNodesRequest lost =
      filter_nodes_request("podcycle-scheduler", p, {10, 20});
  lost.set_session_id("no-such-session");
  expect_refused(lost, StatusCode::FAILED_PRECONDITION,
                 "unknown session \"no-such-session\"");

  // Nothing changed: the table is at version 1 with every node, the
  // cycle is p's with its state, which PreScore then ends.
  const v1::PreFilterResponse rest =
      filter_nodes("podcycle-scheduler", p, {10, kSlots});
  EXPECT_EQ(rest.table_version(), 1u);
  EXPECT_EQ(rest.rejected_nodes_size(), 10);
  EXPECT_EQ(rest.reasons(0), "node(s) reject p (state 1)");
  EXPECT_EQ(prescore_state(p), 1);
  EXPECT_EQ(log_lines(log_file_),
            (std::vector<std::string>{"begin p 1", "end p 1"}));
}

TEST(NodeWindow, SlotsOutsideTheRangesAreNull) {
  std::vector<schedplug_node> nodes(10);
  std::vector<const schedplug_node*> views;
  for (const schedplug_node& n : nodes) views.push_back(&n);
  views[4] = nullptr;  // an empty slot stays empty
  std::vector<const schedplug_node*> out;
  // Unordered, overlapping, past the end.
  const std::vector<uint32_t> ranges = {8, 50, 2, 6, 3, 5, 5, 6};
  const auto window = window_views(views, ranges, out);
  ASSERT_EQ(window.size(), 10u);
  for (size_t i = 0; i < window.size(); ++i) {
    const bool in = (i >= 2 && i < 6 && i != 4) || i >= 8;
    EXPECT_EQ(window[i], in ? views[i] : nullptr) << "slot " << i;
  }
  // Ends after the last slot in a range; nothing when all are past the end.
  EXPECT_EQ(window_views(views, std::vector<uint32_t>{1, 3}, out).size(), 3u);
  EXPECT_EQ(window_views(views, std::vector<uint32_t>{10, 12}, out).size(), 0u);

  EXPECT_EQ(window_error({}, "PreFilter", false), "");
  EXPECT_NE(window_error({}, "FilterNodes", true), "");
  EXPECT_NE(window_error(std::vector<uint32_t>{1}, "PreFilter", false), "");
  EXPECT_NE(window_error(std::vector<uint32_t>{3, 3}, "PreFilter", false), "");
  EXPECT_EQ(window_error(std::vector<uint32_t>{3, 4, 0, 1}, "X", true), "");
}

TEST(NodeWindow, AWalkIsSlicedInTheOrderItsPairsCame) {
  // Slots 30-39 (the pair clipped to a table of 40), then 3-11; an empty
  // pair after clipping counts for nothing.
  const std::vector<uint32_t> walk = {30, 100, 45, 50, 3, 12};
  EXPECT_EQ(walk_length(walk, 40), 19u);
  EXPECT_EQ(walk_slice(walk, 40, 0, 5), (std::vector<uint32_t>{30, 35}));
  EXPECT_EQ(walk_slice(walk, 40, 8, 12), (std::vector<uint32_t>{38, 40, 3, 5}));
  EXPECT_EQ(walk_slice(walk, 40, 0, 19),
            (std::vector<uint32_t>{30, 40, 3, 12}));
  EXPECT_EQ(walk_slice(walk, 40, 12, 100), (std::vector<uint32_t>{5, 12}));
  EXPECT_TRUE(walk_slice(walk, 40, 19, 25).empty());
  EXPECT_TRUE(walk_slice(walk, 40, 4, 4).empty());
}

TEST(FilterOutcomeMerge, StepsAddUpAsOneRun) {
  FilterOutcome a, b;
  a.skipped = {false, true};
  b.skipped = {false, true};
  a.reasons = {"full", "tainted"};
  b.reasons = {"tainted", "far"};
  a.rejections = {{1, 0, SCHEDPLUG_UNSCHEDULABLE, 0},
                  {6, 0, SCHEDPLUG_UNSCHEDULABLE, 1}};
  b.rejections = {{3, 0, SCHEDPLUG_UNSCHEDULABLE, 0},
                  {9, 0, SCHEDPLUG_ERROR, 1}};
  a.runs.resize(2);
  b.runs.resize(2);
  a.runs[0].calls = 5;
  b.runs[0].calls = 4;
  b.runs[0].errors = 1;
  a.runs[0].hooks.add(TimedHook::kFilter, std::chrono::microseconds(3));
  b.runs[0].hooks.add(TimedHook::kFilter, std::chrono::microseconds(4));
  b.unfinished.push_back({0, nullptr, "plugin \"A\" did not finish"});
  merge_filter_outcome(a, std::move(b));

  EXPECT_EQ(a.skipped, (std::vector<bool>{false, true}));
  EXPECT_EQ(a.reasons, (std::vector<std::string>{"full", "tainted", "far"}));
  ASSERT_EQ(a.rejections.size(), 4u);
  const std::vector<std::pair<uint32_t, std::string>> want = {
      {1, "full"}, {3, "tainted"}, {6, "tainted"}, {9, "far"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(a.rejections[i].node, want[i].first);
    EXPECT_EQ(a.reasons[a.rejections[i].reason], want[i].second);
  }
  EXPECT_EQ(a.rejections[3].code, SCHEDPLUG_ERROR);
  EXPECT_EQ(a.runs[0].calls, 9u);
  EXPECT_EQ(a.runs[0].errors, 1u);
  EXPECT_EQ(a.runs[0].hooks.took(TimedHook::kFilter),
            std::chrono::microseconds(7));
  ASSERT_EQ(a.unfinished.size(), 1u);
  EXPECT_EQ(a.unfinished[0].plugin, 0u);
}

}  // namespace
}  // namespace schedplug::host::testing
