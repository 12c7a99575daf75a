// Deadlines name the slow plugin; background refresh never blocks requests.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

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

TEST(Deadlines, TheAnswerNamesThePluginThatWasRunning) {
  // 200 nodes x 4 ms in SleepyFilter is far beyond the 400 ms deadline.
  // The host keeps half of the remaining time for its answer to travel.
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
  ASSERT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << s.error_message();
  EXPECT_NE(
      s.error_message().find("plugin \"SleepyFilter\" was running filter"),
      std::string::npos)
      << s.error_message();
  EXPECT_NE(host.app().metrics().text().find(
                "schedplug_deadline_exceeded_total{plugin=\"SleepyFilter\"} 1"),
            std::string::npos);

  // The table moved to version 1 before the chain ran out; the next call
  // (with a generous deadline) works on it.
  v1::NodeTableDelta empty;
  empty.set_base_version(1);
  v1::PreFilterResponse ok;
  const grpc::Status again =
      prefilter(host, session, "default-scheduler", empty, &ok, 10s);
  ASSERT_TRUE(again.ok()) << again.error_message();
  EXPECT_EQ(ok.table_version(), 1u);
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
  EXPECT_NE(
      text.find(
          "schedplug_plugin_duration_seconds_count{extension_point=\"filter\","
          "plugin=\"FreeCpu\"} 1"),
      std::string::npos);
}

}  // namespace
}  // namespace schedplug::host::testing
