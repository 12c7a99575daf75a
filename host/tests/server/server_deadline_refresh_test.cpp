// Deadlines name the slow plugin; background refresh never blocks requests.
// One file: deadlines, applies, skip and refresh are each timed or counted per
// plugin call, and the cases share full_table() and prefilter() below.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "host/metrics/host_metrics.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

v1::NodeTableDelta full_table(size_t nodes) {
  RandomCluster rnd(11);
  rnd.inject_errors = false;
  v1::NodeTableDelta d;
  d.set_full(true);
  d.set_new_version(1);
  for (uint32_t i = 0; i < nodes; ++i) {
    v1::Node n = rnd.node(i, "n" + std::to_string(i), 1);
    n.clear_labels();  // nothing for FreeCpu to reject
    *d.add_upserts() = n;
  }
  return d;
}

grpc::Status prefilter(RunningHost& host, const std::string& session,
                       const std::string& profile,
                       const v1::NodeTableDelta& delta,
                       v1::PreFilterResponse* response,
                       std::chrono::milliseconds timeout = 0ms) {
  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name(profile);
  request.mutable_pod()->set_name("p");
  *request.mutable_delta() = delta;
  grpc::ClientContext context;
  if (timeout > 0ms)
    context.set_deadline(std::chrono::system_clock::now() + timeout);
  return host.stub().PreFilter(&context, request, response);
}

// The value of `series` in a scrape, or -1 when the scrape lacks it.
double scraped(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

double hook_count(const std::string& text, const char* hook,
                  const char* plugin) {
  return scraped(text,
                 std::string("schedplug_plugin_hook_duration_seconds_count{"
                             "extension_point=\"") +
                     hook + "\",plugin=\"" + plugin + "\"}");
}

v1::PreScoreResponse prescore(RunningHost& host, const std::string& session,
                              const std::string& pod, uint32_t nodes) {
  v1::PreScoreRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("default-scheduler");
  request.mutable_pod()->set_name(pod);
  request.set_table_version(1);
  for (uint32_t i = 0; i < nodes; ++i) request.add_nodes(i);
  grpc::ClientContext context;
  v1::PreScoreResponse response;
  const grpc::Status s = host.stub().PreScore(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response;
}

TEST(Deadlines, TheAnswerNamesThePluginThatWasRunning) {
  // 200 nodes x 4 ms in SleepyFilter is far beyond the 400 ms deadline.
  // The host keeps half of the remaining time for its answer to travel,
  // and answers with what finished: FreeCpu's verdicts, and SleepyFilter
  // named as unfinished (the shim applies its failurePolicy).
  RunningHost host(
      [](HostOptions& o) {
        o.workers = 1;
        o.service.deadline_margin_fraction = 0.5;
        o.service.deadline_margin_max = 1000ms;
      },
      {.sleep_ms = 4});
  const std::string session = host.handshake();
  v1::PreFilterResponse response;
  const grpc::Status s = prefilter(host, session, "slow-scheduler",
                                   full_table(200), &response, 400ms);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.unfinished_size(), 1);
  EXPECT_EQ(response.unfinished(0).plugin(), "SleepyFilter");
  EXPECT_NE(response.unfinished(0).reason().find(
                "plugin \"SleepyFilter\" did not finish filter within"),
            std::string::npos)
      << response.unfinished(0).reason();
  EXPECT_EQ(response.table_version(), 1u);
  EXPECT_NE(host.app().metrics().text().find(
                "schedplug_deadline_exceeded_total{plugin=\"SleepyFilter\"} 1"),
            std::string::npos);

  // The table is at version 1; the next call works on it.
  v1::NodeTableDelta empty;
  empty.set_base_version(1);
  v1::PreFilterResponse ok;
  const grpc::Status again =
      prefilter(host, session, "default-scheduler", empty, &ok, 10s);
  ASSERT_TRUE(again.ok()) << again.error_message();
  EXPECT_EQ(ok.table_version(), 1u);
  EXPECT_EQ(ok.unfinished_size(), 0);
}

// A plugin's own `schedplug.timeout` bounds it on the host, so a slow
// plugin (here an Ignore one) does not use up the time of the plugin after
// it: FreeCpu still runs and its verdicts count.
TEST(Deadlines, APluginsOwnTimeoutLeavesTimeForTheNext) {
  RunningHost host([](HostOptions& o) { o.workers = 1; });
  const std::string session = host.handshake();
  v1::NodeTableDelta table = full_table(100);
  // FreeCpu rejects cordoned nodes: give it something to find.
  v1::KeyValue* kv = table.mutable_upserts(99)->add_labels();
  kv->set_key("test/cordon");
  kv->set_value("true");
  v1::PreFilterResponse response;
  const grpc::Status s =
      prefilter(host, session, "timeout-scheduler", table, &response, 10s);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.unfinished_size(), 1);
  EXPECT_EQ(response.unfinished(0).plugin(), "SleepyFilter");
  // Its own 50 ms minus the 20 % margin, not the call's 10 s.
  EXPECT_NE(
      response.unfinished(0).reason().find("did not finish filter within"),
      std::string::npos)
      << response.unfinished(0).reason();
  EXPECT_EQ(response.unfinished(0).reason().find("within 9"), std::string::npos)
      << response.unfinished(0).reason();
  ASSERT_EQ(response.rejected_nodes_size(), 1);
  EXPECT_EQ(response.rejected_nodes(0), 99u);
  EXPECT_EQ(response.plugins(response.rejected_by(0)), "FreeCpu");
}

// applies() is asked once per cycle (in PreFilter, for every native plugin
// of the profile); PreScore and single-node Filter use the answers the
// shim sends back. AppliesCounter reports how often it was asked.
TEST(Applies, AskedOncePerCycle) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::PreFilterResponse pf;
  ASSERT_TRUE(
      prefilter(host, session, "applies-scheduler", full_table(2), &pf, 10s)
          .ok());
  EXPECT_TRUE(pf.applies_reported());
  EXPECT_EQ(pf.not_applying_size(), 0);
  ASSERT_EQ(pf.reasons_size(), 1);
  EXPECT_EQ(pf.reasons(0), "applies calls=1");

  v1::PreScoreRequest ps;
  ps.set_session_id(session);
  ps.set_scheduler_name("applies-scheduler");
  ps.mutable_pod()->set_name("p");
  ps.set_table_version(pf.table_version());
  ps.add_nodes(0);
  ps.set_applies_known(true);
  v1::PreScoreResponse scores;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(host.stub().PreScore(&c, ps, &scores).ok());
  }
  ASSERT_EQ(scores.plugins_size(), 1);
  ASSERT_EQ(scores.plugins(0).scores_size(), 1);
  EXPECT_EQ(scores.plugins(0).scores(0), 1) << "applies() asked again";

  v1::FilterRequest fr;
  fr.set_session_id(session);
  fr.set_scheduler_name("applies-scheduler");
  fr.mutable_pod()->set_name("p");
  fr.mutable_node()->set_name("n0");
  fr.add_plugins("AppliesCounter");
  fr.set_applies_known(true);
  v1::FilterResponse one;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(host.stub().Filter(&c, fr, &one).ok());
  }
  EXPECT_EQ(one.reason(), "applies calls=1");

  // Told that the plugin does not apply, the host skips it without asking.
  fr.add_not_applying("AppliesCounter");
  {
    grpc::ClientContext c;
    ASSERT_TRUE(host.stub().Filter(&c, fr, &one).ok());
  }
  EXPECT_EQ(one.code(), v1::CODE_SUCCESS);
}

// A plugin returning SKIP from filter: an ERROR verdict naming it.
TEST(Skip, FromFilterIsAnErrorVerdict) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::FilterRequest fr;
  fr.set_session_id(session);
  fr.set_scheduler_name("applies-scheduler");
  fr.mutable_pod()->set_name("p");
  fr.mutable_node()->set_name("n0");
  fr.add_plugins("SkipFilter");
  v1::FilterResponse one;
  grpc::ClientContext c;
  ASSERT_TRUE(host.stub().Filter(&c, fr, &one).ok());
  EXPECT_EQ(one.code(), v1::CODE_ERROR);
  EXPECT_EQ(one.plugin(), "SkipFilter");
  EXPECT_NE(one.reason().find("returned SKIP from filter"), std::string::npos)
      << one.reason();
}

// A refused delta names the host's table version in the trailer, so the
// shim can tell what the host has.
TEST(Trailer, RefusedDeltaReportsTheTableVersion) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::PreFilterResponse pf;
  ASSERT_TRUE(
      prefilter(host, session, "default-scheduler", full_table(2), &pf, 10s)
          .ok());
  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("default-scheduler");
  request.mutable_pod()->set_name("p");
  request.mutable_delta()->set_base_version(7);
  request.mutable_delta()->set_new_version(8);
  request.mutable_delta()->add_removed(0);
  grpc::ClientContext context;
  const grpc::Status s = host.stub().PreFilter(&context, request, &pf);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("schedplug-table-version");
  ASSERT_NE(it, trailers.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), "1");
}

// The RefreshProbe filter reports "refresh calls=N failures=F hanging=H".
struct ProbeState {
  int calls = 0, failures = 0, hanging = 0;
};
ProbeState probe(RunningHost& host, const std::string& session,
                 const std::string& profile) {
  v1::PreFilterResponse response;
  const grpc::Status s =
      prefilter(host, session, profile, full_table(1), &response, 5s);
  EXPECT_TRUE(s.ok()) << s.error_message();
  ProbeState state;
  if (response.reasons_size() != 1) return state;
  std::smatch m;
  const std::string reason = response.reasons(0);
  if (std::regex_search(
          reason, m,
          std::regex("calls=(\\d+) failures=(\\d+) hanging=(\\d+)"))) {
    state = {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  }
  return state;
}

TEST(Refresh, AFailingRefreshIsRetriedAndCounted) {
  RunningHost host;
  const std::string session = host.handshake();
  ProbeState state;
  for (int i = 0; i < 200 && state.failures < 3; ++i) {
    state = probe(host, session, "refresh-fail");
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(state.failures, 3);  // retried every 50 ms
  EXPECT_EQ(state.failures, state.calls);
  const std::string metrics = host.app().metrics().text();
  EXPECT_NE(
      metrics.find("schedplug_refresh_failures_total{plugin=\"RefreshProbe\"}"),
      std::string::npos);
}

// Every refresh call is timed: the histogram is observed just before the
// call is counted, and each of the config's two RefreshProbe instances may
// be between the two.
TEST(Refresh, EveryRefreshCallIsTimed) {
  RunningHost host;
  const std::string session = host.handshake();
  double timed = 0;
  std::string text;
  for (int i = 0; i < 200 && timed < 3; ++i) {
    std::this_thread::sleep_for(20ms);
    text = host.app().metrics().text();
    timed = hook_count(text, "refresh", "RefreshProbe");
  }
  const double calls =
      scraped(text, "schedplug_refresh_total{plugin=\"RefreshProbe\"}");
  EXPECT_GE(timed, 3) << text;
  EXPECT_GE(timed, calls) << text;
  EXPECT_LE(timed, calls + 2) << text;
  EXPECT_EQ(hook_count(text, "filter", "RefreshProbe"), 0) << text;
}

TEST(Refresh, AHangingRefreshNeverBlocksARequest) {
  RunningHost host({}, {.hang_ms = 2000});
  const std::string session = host.handshake();
  // Wait until the first refresh is inside its 2 s hang...
  ProbeState state;
  for (int i = 0; i < 100 && state.hanging == 0; ++i) {
    state = probe(host, session, "refresh-hang");
    if (state.hanging == 0) std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(state.hanging, 1);
  // ...then requests keep being answered while it hangs.
  for (int i = 0; i < 5; ++i) {
    state = probe(host, session, "refresh-hang");
    EXPECT_EQ(state.calls, 1);
  }
  // Once it returns, refresh carries on with its period.
  for (int i = 0; i < 300 && (state.hanging == 1 || state.calls < 3); ++i) {
    std::this_thread::sleep_for(20ms);
    state = probe(host, session, "refresh-hang");
  }
  EXPECT_EQ(state.hanging, 0);
  EXPECT_GE(state.calls, 3);
}

TEST(Metrics, PerPluginCallsAndTableSize) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::PreFilterResponse response;
  ASSERT_TRUE(
      prefilter(host, session, "default-scheduler", full_table(25), &response)
          .ok());
  const std::string text = host.app().metrics().text();
  EXPECT_NE(
      text.find(
          "schedplug_plugin_calls_total{extension_point=\"filter\",plugin="
          "\"ResourceFit\"} 25"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("schedplug_node_table_nodes 25"), std::string::npos);
  EXPECT_NE(text.find("schedplug_resyncs_total 1"), std::string::npos);
  EXPECT_NE(
      text.find("schedplug_rpc_duration_seconds_count{method=\"PreFilter\"} 1"),
      std::string::npos);
  EXPECT_NE(text.find("schedplug_plugin_hook_duration_seconds_count{extension_"
                      "point=\"filter\",plugin=\"FreeCpu\"} 1"),
            std::string::npos)
      << text;
}

// One observation per plugin per hook per call: PreFilter times the filters
// and the cycle's gates; a PreScore times score and normalize, and the
// gates only when it begins the pod itself (no cycle of its pod).
TEST(Metrics, EachHookIsTimedOncePerCall) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::PreFilterResponse response;
  ASSERT_TRUE(
      prefilter(host, session, "default-scheduler", full_table(25), &response)
          .ok());
  std::string text = host.app().metrics().text();
  for (const char* filter : {"ResourceFit", "FreeCpu"})
    EXPECT_EQ(hook_count(text, "filter", filter), 1) << filter << "\n" << text;
  // The cycle began every plugin of the profile that has a gate; the pod
  // has no node selector, so LabelFilter's applies() said no to filter.
  EXPECT_EQ(hook_count(text, "begin_pod", "LabelFilter"), 1) << text;
  EXPECT_EQ(hook_count(text, "filter", "LabelFilter"), 0) << text;
  EXPECT_EQ(hook_count(text, "begin_pod", "Latency"), 1) << text;
  EXPECT_EQ(hook_count(text, "begin_pod", "FreeCpu"), -1) << "no gate";
  EXPECT_EQ(hook_count(text, "score", "FreeCpu"), 0) << text;
  EXPECT_EQ(hook_count(text, "normalize", "FreeCpu"), 0) << text;

  // Another pod: no cycle, so the score chain begins it.
  prescore(host, session, "q", 10);
  text = host.app().metrics().text();
  for (const char* scorer : {"FreeCpu", "Latency", "SpreadScore"}) {
    EXPECT_EQ(hook_count(text, "score", scorer), 1) << scorer << "\n" << text;
    EXPECT_EQ(hook_count(text, "normalize", scorer), 1) << scorer;
  }
  EXPECT_EQ(hook_count(text, "begin_pod", "Latency"), 2) << text;
  EXPECT_EQ(hook_count(text, "begin_pod", "LabelFilter"), 1) << "no scorer";
  EXPECT_EQ(hook_count(text, "filter", "FreeCpu"), 1) << text;
  EXPECT_EQ(hook_count(text, "filter", "SpreadScore"), -1) << "no filter";

  // The cycle's pod: its PreScore uses the states PreFilter began.
  prescore(host, session, "p", 10);
  text = host.app().metrics().text();
  EXPECT_EQ(hook_count(text, "score", "Latency"), 2) << text;
  EXPECT_EQ(hook_count(text, "begin_pod", "Latency"), 2) << text;
}

// Each method and status code keeps its own series (the host looks them up
// once and reuses them).
TEST(Metrics, RpcSeriesByMethodAndCode) {
  RunningHost host;
  const std::string session = host.handshake();
  v1::PreFilterResponse response;
  ASSERT_TRUE(
      prefilter(host, session, "default-scheduler", full_table(3), &response)
          .ok());
  ASSERT_EQ(
      prefilter(host, session, "no-such-scheduler", full_table(3), &response)
          .error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(
      prefilter(host, session, "default-scheduler", full_table(3), &response)
          .ok());
  const std::string text = host.app().metrics().text();
  EXPECT_NE(
      text.find("schedplug_rpc_total{code=\"OK\",method=\"PreFilter\"} 2"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("schedplug_rpc_total{code=\"INVALID_ARGUMENT\","
                      "method=\"PreFilter\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("schedplug_rpc_duration_seconds_count{method=\"PreFilter\"} 3"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace schedplug::host::testing
