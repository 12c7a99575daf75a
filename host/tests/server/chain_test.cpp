// The filter and score chains on the test plugins, without gRPC.
// One file: every case makes instances from the test plugin directory with
// make() and node() below and runs the chains as PreFilter and PreScore do; the
// pod-state cases reuse the same fixture.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "host/chain/filter_chain.hpp"
#include "host/chain/pod_cycle.hpp"
#include "host/chain/score_chain.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"
#include "test_support.hpp"

namespace schedplug::host {
namespace {

class ChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult loaded = load_plugin_directory(testing::test_plugin_dir());
    ASSERT_TRUE(loaded.problems.empty()) << loaded.problems[0].message;
    for (const auto& lib : loaded.plugins) libs_[lib->name()] = lib;
  }
  const PluginInstance* make(const std::string& name,
                             const std::string& args = "{}") {
    instances_.push_back(PluginInstance::create(libs_.at(name), args));
    return instances_.back().get();
  }
  static std::unique_ptr<NodeModel> node(const std::string& name,
                                         int64_t cpu_free,
                                         KeyValues labels = {},
                                         uint32_t pods = 0) {
    NodeData d;
    d.name = name;
    d.labels = std::move(labels);
    d.allocatable = {{"cpu", 10000}, {"pods", 110}};
    d.requested = {{"cpu", 10000 - cpu_free}};
    d.pod_count = pods;
    return std::make_unique<NodeModel>(std::move(d));
  }
  static PodModel pod(int64_t cpu, KeyValues selector = {},
                      KeyValues labels = {}) {
    PodData d;
    d.namespace_name = "ns";
    d.name = "p";
    d.requests = {{"cpu", cpu}};
    d.node_selector = std::move(selector);
    d.labels = std::move(labels);
    return PodModel(std::move(d));
  }

  std::map<std::string, std::shared_ptr<PluginLibrary>> libs_;
  std::vector<std::unique_ptr<PluginInstance>> instances_;
  ThreadPool pool_{2};
};

TEST_F(ChainTest, FirstRejectionInProfileOrderWins) {
  std::vector<const PluginInstance*> filters{
      make("LabelFilter"), make("ResourceFit"), make("FreeCpu")};
  auto a = node("a", 5000, {{"zone", "x"}});
  auto b = node("b", 100, {{"zone", "y"}});  // both reject
  auto c =
      node("c", 100, {{"zone", "x"}, {"test/cordon", "true"}});  // fit first
  auto d = node("d", 5000, {{"zone", "x"}, {"test/cordon", "true"}});
  std::vector<const schedplug_node*> nodes{&a->view(), nullptr, &b->view(),
                                           &c->view(), &d->view()};
  const PodModel p = pod(1000, {{"zone", "x"}});
  FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, Deadline::never());
  ASSERT_EQ(out.rejections.size(), 3u);
  EXPECT_EQ(out.rejections[0].node, 2u);
  EXPECT_EQ(out.rejections[0].plugin, 0u);  // LabelFilter before ResourceFit
  EXPECT_EQ(out.rejections[0].code, SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_EQ(out.rejections[1].node, 3u);
  EXPECT_EQ(out.rejections[1].plugin, 1u);
  EXPECT_EQ(out.reasons[out.rejections[1].reason], "Insufficient cpu");
  EXPECT_EQ(out.rejections[2].node, 4u);
  EXPECT_EQ(out.rejections[2].plugin, 2u);
  EXPECT_EQ(out.reasons.size(), 3u);
  EXPECT_EQ(out.runs[0].calls, 4u);  // the empty slot is not evaluated
  EXPECT_EQ(out.runs[1].calls, 3u);  // b was already rejected
}

TEST_F(ChainTest, AppliesHookSkipsAPluginForPodsItIgnores) {
  std::vector<const PluginInstance*> filters{make("LabelFilter"),
                                             make("ResourceFit")};
  auto a = node("a", 5000, {{"zone", "y"}});
  std::vector<const schedplug_node*> nodes{&a->view()};
  const PodModel p = pod(1000);  // no node selector
  FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, Deadline::never());
  EXPECT_TRUE(out.skipped[0]);
  EXPECT_FALSE(out.skipped[1]);
  EXPECT_TRUE(out.rejections.empty());
  EXPECT_EQ(out.runs[0].calls, 0u);
}

// Also checks each rejection's reason: the chunks keep their reasons
// interned, and three of them alternate from node to node here.
TEST_F(ChainTest, ManyNodesInParallelMatchSequential) {
  std::vector<const PluginInstance*> filters{make("ResourceFit"),
                                             make("FreeCpu")};
  std::vector<std::unique_ptr<NodeModel>> models;
  std::vector<const schedplug_node*> nodes;
  for (int i = 0; i < 3000; ++i) {
    KeyValues labels;
    if (i % 7 == 0) labels.push_back({"test/cordon", "true"});
    const uint32_t pods = i % 5 == 0 ? 110 : 0;  // "Too many pods"
    models.push_back(
        node("n" + std::to_string(i), (i * 37) % 4000, labels, pods));
    nodes.push_back(&models.back()->view());
  }
  const PodModel p = pod(2000);
  FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, Deadline::never());
  std::vector<FilterRejection> expected;
  std::vector<std::string> expected_reasons;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (uint32_t f = 0; f < filters.size(); ++f) {
      const Verdict v = filters[f]->filter(p.view(), *nodes[i]);
      if (v.ok()) continue;
      expected.push_back({static_cast<uint32_t>(i), f, v.code, 0});
      expected_reasons.push_back(v.reason);
      break;
    }
  }
  ASSERT_EQ(out.rejections.size(), expected.size());
  std::set<std::string> distinct(expected_reasons.begin(),
                                 expected_reasons.end());
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_EQ(out.reasons.size(), distinct.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const FilterRejection& r = out.rejections[i];
    EXPECT_EQ(r.node, expected[i].node);
    EXPECT_EQ(r.plugin, expected[i].plugin);
    EXPECT_EQ(r.code, expected[i].code);
    ASSERT_LT(r.reason, out.reasons.size());
    EXPECT_EQ(out.reasons[r.reason], expected_reasons[i]) << "node " << r.node;
  }
}

TEST_F(ChainTest, DeadlineNamesThePluginThatWasRunning) {
  std::vector<const PluginInstance*> filters{
      make("FreeCpu"), make("SleepyFilter", R"({"sleep_ms":20})")};
  std::vector<std::unique_ptr<NodeModel>> models;
  std::vector<const schedplug_node*> nodes;
  for (int i = 0; i < 64; ++i) {
    models.push_back(node("n" + std::to_string(i), 5000));
    nodes.push_back(&models.back()->view());
  }
  const PodModel p = pod(100);
  const auto deadline = Deadline::at(std::chrono::steady_clock::now() +
                                     std::chrono::milliseconds(50));
  const FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, deadline);
  // Partial results: FreeCpu finished, SleepyFilter is named as unfinished.
  ASSERT_EQ(out.unfinished.size(), 1u);
  EXPECT_EQ(out.unfinished[0].plugin, 1u);
  EXPECT_NE(out.unfinished[0].reason.find(
                "plugin \"SleepyFilter\" did not finish filter within"),
            std::string::npos)
      << out.unfinished[0].reason;
  EXPECT_EQ(out.runs[0].calls, 64u);  // FreeCpu finished
}

// A slow plugin with its own short deadline stops there; the plugin after
// it still runs within its own (longer) deadline and its verdicts count.
TEST_F(ChainTest, ASlowPluginDoesNotUseUpTheTimeOfTheNextOne) {
  std::vector<const PluginInstance*> filters{
      make("SleepyFilter", R"({"sleep_ms":20})"), make("FreeCpu")};
  std::vector<std::unique_ptr<NodeModel>> models;
  std::vector<const schedplug_node*> nodes;
  for (int i = 0; i < 64; ++i) {
    models.push_back(node("n" + std::to_string(i), 5000));
    nodes.push_back(&models.back()->view());
  }
  const PodModel p = pod(100);
  const auto now = std::chrono::steady_clock::now();
  const std::vector<Deadline> deadlines{
      Deadline::at(now + std::chrono::milliseconds(30)),
      Deadline::at(now + std::chrono::hours(1))};
  const FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_,
                  Deadline::at(now + std::chrono::hours(1)),
                  {.plugin_deadlines = deadlines, .applies = {}});
  ASSERT_EQ(out.unfinished.size(), 1u);
  EXPECT_EQ(out.unfinished[0].plugin, 0u);
  EXPECT_GT(out.runs[1].calls, 0u);  // FreeCpu ran
  EXPECT_LT(out.runs[0].calls, 64u);
}

// Upstream turns Skip returned from Filter into an error; the chain must
// not treat it as a plain rejection (nor a pass).
TEST_F(ChainTest, SkipFromFilterIsAnError) {
  std::vector<const PluginInstance*> filters{make("SkipFilter"),
                                             make("FreeCpu")};
  auto a = node("a", 5000);
  std::vector<const schedplug_node*> nodes{&a->view()};
  const PodModel p = pod(100);
  const FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, Deadline::never());
  ASSERT_EQ(out.rejections.size(), 1u);
  EXPECT_EQ(out.rejections[0].code, SCHEDPLUG_ERROR);
  EXPECT_NE(out.reasons[out.rejections[0].reason].find(
                "returned SKIP from filter on node \"a\""),
            std::string::npos)
      << out.reasons[out.rejections[0].reason];
  const SingleFilterResult one =
      run_filters_on_node(filters, p.view(), a->view(), Deadline::never());
  EXPECT_EQ(one.verdict.code, SCHEDPLUG_ERROR);
  ASSERT_NE(one.plugin, nullptr);
  EXPECT_EQ(one.plugin->name(), "SkipFilter");
}

// The applies() answers the shim sends back are used instead of asking.
TEST_F(ChainTest, KnownAppliesAnswersAreNotAskedAgain) {
  std::vector<const PluginInstance*> filters{make("FreeCpu")};
  auto a = node("a", 1);  // FreeCpu would reject: too little cpu
  std::vector<const schedplug_node*> nodes{&a->view()};
  const PodModel p = pod(100);
  const std::vector<uint8_t> no{0};
  const FilterOutcome out =
      run_filters(filters, p.view(), nodes, pool_, Deadline::never(),
                  {.plugin_deadlines = {}, .applies = no});
  EXPECT_TRUE(out.skipped[0]);
  EXPECT_TRUE(out.rejections.empty());
}

TEST_F(ChainTest, ScoresAreNormalizedPerPlugin) {
  std::vector<const PluginInstance*> scorers{make("FreeCpu"), make("Latency"),
                                             make("SpreadScore")};
  auto a = node("a", 1000, {{"test/latency", "10"}}, 0);
  auto b = node("b", 3000, {{"test/latency", "30"}}, 50);
  auto c = node("c", 2000, {{"test/latency", "20"}}, 100);
  std::vector<const schedplug_node*> nodes{&a->view(), &b->view(), &c->view()};
  const PodModel p = pod(0);
  ScoreOutcome out =
      run_scores(scorers, p.view(), nodes, pool_, Deadline::never());
  EXPECT_EQ(out.plugins[0].scores,
            (std::vector<int64_t>{0, 100, 50}));  // linear
  EXPECT_EQ(out.plugins[1].scores,
            (std::vector<int64_t>{100, 0, 50}));  // reversed
  EXPECT_EQ(out.plugins[2].scores,
            (std::vector<int64_t>{100, 50, 0}));  // its own
  for (const auto& pl : out.plugins) EXPECT_TRUE(pl.error.empty()) << pl.error;
}

TEST_F(ChainTest, OutOfRangeNormalizationIsAnErrorNamingThePlugin) {
  std::vector<const PluginInstance*> scorers{make("BadNormalize"),
                                             make("FreeCpu")};
  auto a = node("a", 1000);
  auto b = node("b", 2000);
  std::vector<const schedplug_node*> nodes{&a->view(), &b->view()};
  const PodModel p = pod(0);
  ScoreOutcome out =
      run_scores(scorers, p.view(), nodes, pool_, Deadline::never());
  EXPECT_TRUE(out.plugins[0].scores.empty());
  EXPECT_NE(out.plugins[0].error.find("BadNormalize"), std::string::npos)
      << out.plugins[0].error;
  EXPECT_NE(out.plugins[0].error.find("1000"), std::string::npos)
      << out.plugins[0].error;
  // The other plugin is unaffected.
  EXPECT_TRUE(out.plugins[1].error.empty());
  EXPECT_EQ(out.plugins[1].scores.size(), 2u);
}

TEST_F(ChainTest, ScoreErrorNamesPluginAndNode) {
  std::vector<const PluginInstance*> scorers{make("Latency")};
  auto a = node("a", 1000);
  auto b = node("b", 1000, {{"test/score-error", "true"}});
  std::vector<const schedplug_node*> nodes{&a->view(), &b->view()};
  const PodModel p = pod(0);
  ScoreOutcome out =
      run_scores(scorers, p.view(), nodes, pool_, Deadline::never());
  EXPECT_NE(out.plugins[0].error.find("Latency"), std::string::npos);
  EXPECT_NE(out.plugins[0].error.find("\"b\""), std::string::npos)
      << out.plugins[0].error;
  EXPECT_EQ(out.runs[0].errors, 1u);
}

TEST_F(ChainTest, SingleNodeFilterStopsAtTheFirstNonSuccess) {
  std::vector<const PluginInstance*> filters{
      make("FreeCpu"), make("ResourceFit"), make("LabelFilter")};
  auto a = node("a", 100, {{"test/cordon", "false"}});
  const PodModel p = pod(500, {{"zone", "x"}});
  SingleFilterResult r =
      run_filters_on_node(filters, p.view(), a->view(), Deadline::never());
  ASSERT_NE(r.plugin, nullptr);
  EXPECT_EQ(r.plugin->name(), "ResourceFit");
  EXPECT_EQ(r.verdict.reason, "Insufficient cpu");
  EXPECT_EQ(r.runs.size(), 2u);
}

// Per-pod state (plugin.h v1.1 pod_begin / pod_end) through the chains:
// abi.d/pod_state.so (host/tests/core/abi/pod_state.c). Without a cycle (a
// call the host cannot tie to its PreFilter) each chain run begins the pod
// once and ends it; with a PodCycle (what PreFilter begins) every chain run
// of the cycle shares one state, ended once when the cycle goes.
class PodStateChainTest : public ChainTest {
 protected:
  const PluginInstance* pod_state() {
    instances_.push_back(PluginInstance::create(
        load_plugin_file(std::filesystem::path(SCHEDPLUG_ABI_DIR) /
                         "pod_state.so"),
        "{}"));
    return instances_.back().get();
  }
  // The plugin's counters, which it reports as its refresh() error text.
  static std::pair<long, long> counters(const PluginInstance* p) {
    const std::string text = const_cast<PluginInstance*>(p)->refresh().reason;
    long begun = -1, ended = -1;
    const size_t at = text.find("begun=");
    if (at == std::string::npos ||
        std::sscanf(text.c_str() + at, "begun=%ld ended=%ld", &begun, &ended) !=
            2) {
      ADD_FAILURE() << "no counters in the refresh error: " << text;
    }
    return {begun, ended};
  }
};

TEST_F(PodStateChainTest, FilterAndScoreSeeOneStatePerPodAndReleaseIt) {
  const PluginInstance* plugin = pod_state();
  const std::vector<const PluginInstance*> list{plugin};
  std::vector<std::unique_ptr<NodeModel>> models;
  std::vector<const schedplug_node*> nodes;
  for (int i = 0; i < 200; ++i) {
    KeyValues labels;
    if (i % 10 == 0) labels.push_back({"reject", ""});
    models.push_back(node("n" + std::to_string(i), 5000, labels,
                          static_cast<uint32_t>(i % 5)));
    nodes.push_back(&models.back()->view());
  }
  const auto before = counters(plugin);
  const PodModel p = pod(100, {}, {{"weight", "3"}});
  FilterOutcome f =
      run_filters(list, p.view(), nodes, pool_, Deadline::never());
  ASSERT_EQ(f.rejections.size(), 20u);
  EXPECT_EQ(f.reasons[f.rejections[0].reason], "node(s) reject p");
  EXPECT_EQ(f.runs[0].calls, 200u);
  ScoreOutcome s = run_scores(list, p.view(), nodes, pool_, Deadline::never());
  ASSERT_TRUE(s.plugins[0].error.empty()) << s.plugins[0].error;
  // weight 3 x pods (0..4), LINEAR: 4 pods -> 100, 2 pods -> 50.
  EXPECT_EQ(s.plugins[0].scores[4], 100);
  EXPECT_EQ(s.plugins[0].scores[2], 50);
  SingleFilterResult one =
      run_filters_on_node(list, p.view(), *nodes[10], Deadline::never());
  EXPECT_EQ(one.verdict.reason, "node(s) reject p");
  const auto after = counters(plugin);
  EXPECT_EQ(after.first - before.first, 3) << "one pod_begin per chain run";
  EXPECT_EQ(after.second - before.second, 3) << "each state released";
}

TEST_F(PodStateChainTest, GatesAndErrorsFromPodBegin) {
  const PluginInstance* plugin = pod_state();
  const std::vector<const PluginInstance*> list{plugin};
  auto a = node("a", 5000, {}, 1);
  auto b = node("b", 5000, {}, 2);
  std::vector<const schedplug_node*> nodes{&a->view(), nullptr, &b->view()};
  std::vector<const schedplug_node*> scored{&a->view(), &b->view()};

  const PodModel no_filter = pod(100, {}, {{"gate", "no-filter"}});
  FilterOutcome f =
      run_filters(list, no_filter.view(), nodes, pool_, Deadline::never());
  EXPECT_TRUE(f.skipped[0]);
  EXPECT_FALSE(
      run_scores(list, no_filter.view(), scored, pool_, Deadline::never())
          .plugins[0]
          .skipped);

  const PodModel no_score = pod(100, {}, {{"gate", "no-score"}});
  EXPECT_FALSE(
      run_filters(list, no_score.view(), nodes, pool_, Deadline::never())
          .skipped[0]);
  EXPECT_TRUE(
      run_scores(list, no_score.view(), scored, pool_, Deadline::never())
          .plugins[0]
          .skipped);

  // A failing pod_begin fails the pod on every node, naming the plugin.
  const PodModel failing = pod(100, {}, {{"gate", "fail"}});
  f = run_filters(list, failing.view(), nodes, pool_, Deadline::never());
  ASSERT_EQ(f.rejections.size(), 2u);
  EXPECT_EQ(f.rejections[0].code, SCHEDPLUG_ERROR);
  EXPECT_EQ(f.rejections[1].node, 2u);
  EXPECT_EQ(f.reasons[f.rejections[0].reason],
            "plugin PodState failed to prepare the pod (pod_begin): label "
            "gate=fail");
  ScoreOutcome s =
      run_scores(list, failing.view(), scored, pool_, Deadline::never());
  EXPECT_EQ(s.plugins[0].error,
            "plugin PodState failed to prepare the pod (pod_begin): label "
            "gate=fail");
  const auto c = counters(plugin);
  EXPECT_EQ(c.first, c.second);
}

TEST_F(PodStateChainTest, OneCycleSharesOneStateAcrossChainRuns) {
  const PluginInstance* plugin = pod_state();
  const std::vector<const PluginInstance*> list{plugin};
  auto a = node("a", 5000, {{"reject", ""}}, 1);
  auto b = node("b", 5000, {}, 2);
  std::vector<const schedplug_node*> nodes{&a->view(), &b->view()};
  const auto before = counters(plugin);
  PodData d;
  d.namespace_name = "ns";
  d.name = "p";
  d.labels = {{"weight", "2"}};
  auto cycle = std::make_unique<PodCycle>(
      "key", std::make_unique<const PodModel>(std::move(d)), list);
  EXPECT_EQ(counters(plugin).first - before.first, 1);
  ASSERT_NE(cycle->scope_for(plugin), nullptr);
  EXPECT_EQ(cycle->scope_for(make("FreeCpu")), nullptr);

  const schedplug_pod& pod = cycle->pod().view();
  ChainLimits in_cycle;
  in_cycle.cycle = cycle.get();
  FilterOutcome f =
      run_filters(list, pod, nodes, pool_, Deadline::never(), in_cycle);
  ASSERT_EQ(f.rejections.size(), 1u);
  EXPECT_EQ(f.reasons[f.rejections[0].reason], "node(s) reject p");
  SingleFilterResult one =
      run_filters_on_node(list, pod, *nodes[0], Deadline::never(), in_cycle);
  EXPECT_EQ(one.verdict.reason, "node(s) reject p");
  // The shim's applies answer is not consulted for a plugin of the cycle.
  const std::vector<uint8_t> says_no{0};
  ChainLimits shim_says_no = in_cycle;
  shim_says_no.applies = says_no;
  ScoreOutcome s =
      run_scores(list, pod, nodes, pool_, Deadline::never(), shim_says_no);
  ASSERT_FALSE(s.plugins[0].skipped);
  ASSERT_TRUE(s.plugins[0].error.empty()) << s.plugins[0].error;
  // weight 2 x 1 pod and 2 x 2 pods, LINEAR (min-max).
  EXPECT_EQ(s.plugins[0].scores[0], 0);
  EXPECT_EQ(s.plugins[0].scores[1], 100);
  auto during = counters(plugin);
  EXPECT_EQ(during.first - before.first, 1) << "one pod_begin per cycle";
  EXPECT_EQ(during.second - before.second, 0) << "ended before the cycle";
  cycle.reset();
  const auto after = counters(plugin);
  EXPECT_EQ(after.first - before.first, 1);
  EXPECT_EQ(after.second - before.second, 1) << "ended once with the cycle";

  // A cycle whose pod_begin failed has nothing to end.
  PodData failing;
  failing.name = "f";
  failing.labels = {{"gate", "fail"}};
  cycle = std::make_unique<PodCycle>(
      "key", std::make_unique<const PodModel>(std::move(failing)), list);
  EXPECT_EQ(cycle->scope_for(plugin)->error(),
            "plugin PodState failed to prepare the pod (pod_begin): label "
            "gate=fail");
  cycle.reset();
  EXPECT_EQ(counters(plugin), after);
}

}  // namespace
}  // namespace schedplug::host
