// A plugin that hangs inside a hook cannot wedge the host: other calls of
// its session get an answer at their deadline instead of parking, other
// sessions go on, eviction does not wait for it, and the hook watchdog
// turns the host NOT_SERVING and (in the real binary) exits non-zero
// naming the plugin and the hook.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "host/plugin/hook_watchdog.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

v1::NodeTableDelta full_table(size_t nodes, uint64_t version = 1) {
  RandomCluster rnd(17);
  rnd.inject_errors = false;
  v1::NodeTableDelta d;
  d.set_full(true);
  d.set_new_version(version);
  for (uint32_t i = 0; i < nodes; ++i) {
    v1::Node n = rnd.node(i, "n" + std::to_string(i), 1);
    n.clear_labels();  // nothing for FreeCpu to reject
    *d.add_upserts() = n;
  }
  return d;
}

grpc::Status prefilter(v1::Host::Stub& stub, const std::string& session,
                       const std::string& profile,
                       const v1::NodeTableDelta& delta,
                       std::chrono::milliseconds timeout,
                       std::string* table_version_trailer = nullptr) {
  v1::PreFilterRequest request;
  request.set_session_id(session);
  request.set_scheduler_name(profile);
  request.mutable_pod()->set_name("p");
  *request.mutable_delta() = delta;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::PreFilterResponse response;
  grpc::Status s = stub.PreFilter(&context, request, &response);
  if (table_version_trailer != nullptr) {
    const auto& trailers = context.GetServerTrailingMetadata();
    auto it = trailers.find("schedplug-table-version");
    if (it != trailers.end()) {
      *table_version_trailer =
          std::string(it->second.data(), it->second.size());
    }
  }
  return s;
}

grpc::Status prescore(v1::Host::Stub& stub, const std::string& session,
                      std::chrono::milliseconds timeout) {
  v1::PreScoreRequest request;
  request.set_session_id(session);
  request.set_scheduler_name("default-scheduler");
  request.mutable_pod()->set_name("q");
  request.set_table_version(999);  // answered FAILED_PRECONDITION if free
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::PreScoreResponse response;
  return stub.PreScore(&context, request, &response);
}

// Asks until a call on `session` is answered "busy": proof that a call is
// stuck in the session and that the host answers instead of parking.
grpc::Status wait_until_busy(v1::Host::Stub& stub, const std::string& session) {
  grpc::Status s;
  for (int i = 0; i < 300; ++i) {
    s = prescore(stub, session, 1s);
    if (s.error_message().find("is busy") != std::string::npos) return s;
    std::this_thread::sleep_for(20ms);
  }
  return s;
}

TEST(HungPlugin, OtherCallsAreAnsweredNotParked) {
  TempDir scratch;
  const auto release = scratch.path() / "release";
  RunningHost host(
      [](HostOptions& o) {
        o.service.max_sessions = 2;
        o.hook_hard_limit = 0ms;  // this test is about the locks alone
      },
      {.sleep_ms = 600'000, .release_file = release});
  const std::string a = host.handshake();
  const std::string b = host.handshake();

  // Session a: SleepyFilter hangs until `release` exists.
  auto hung = std::async(std::launch::async, [&] {
    return prefilter(host.stub(), a, "slow-scheduler", full_table(1), 600s);
  });

  // 1. Another call of session a gets an answer at its deadline, naming
  //    what holds the session, with the table version it did not change.
  const grpc::Status busy = wait_until_busy(host.stub(), a);
  EXPECT_EQ(busy.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << busy.error_message();
  EXPECT_NE(busy.error_message().find("session " + a +
                                      " is busy: PreFilter "
                                      "pod /p (profile \"slow-scheduler\")"),
            std::string::npos)
      << busy.error_message();
  std::string trailer;
  const grpc::Status busy_prefilter = prefilter(
      host.stub(), a, "default-scheduler", full_table(3, 2), 1s, &trailer);
  EXPECT_EQ(busy_prefilter.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_NE(busy_prefilter.error_message().find("is busy"), std::string::npos)
      << busy_prefilter.error_message();
  EXPECT_EQ(trailer, "1");  // the hung call's delta, not this one's

  // 2. Another session works meanwhile.
  const grpc::Status other =
      prefilter(host.stub(), b, "default-scheduler", full_table(5), 60s);
  EXPECT_TRUE(other.ok()) << other.error_message();

  // 3. A third session evicts the least recently used one (a, busy) at
  //    once; a is then unknown.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  v1::HandshakeResponse third;
  const grpc::Status hs =
      host.stub().Handshake(&context, test_handshake_request(), &third);
  EXPECT_TRUE(hs.ok()) << hs.error_message();
  const grpc::Status gone = prescore(host.stub(), a, 5s);
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << gone.error_message();
  EXPECT_NE(gone.error_message().find("unknown session"), std::string::npos);
  EXPECT_EQ(host.app().pipeline().sessions().size(), 2u);

  std::ofstream(release) << "go";
  const grpc::Status finished = hung.get();
  EXPECT_TRUE(finished.ok()) << finished.error_message();
  // The table-size gauge counts b's 5 nodes; a's node left with a.
  EXPECT_NE(host.app().metrics().text().find("schedplug_node_table_nodes 5"),
            std::string::npos)
      << host.app().metrics().text();
}

TEST(HungPlugin, WatchdogTurnsNotServingAndNamesPluginAndHook) {
  TempDir scratch;
  const auto release = scratch.path() / "release";
  std::promise<HungHook> reported;
  std::atomic<int> reports{0};
  RunningHost host(
      [&](HostOptions& o) {
        o.hook_hard_limit = 300ms;
        o.on_hung_hook = [&](const HungHook& h) {
          if (reports++ == 0) reported.set_value(h);
        };
      },
      {.sleep_ms = 600'000, .release_file = release});
  const std::string listen = "unix://" + (host.dir() / "host.sock").string();
  std::ostringstream before;
  EXPECT_EQ(probe_health(listen, 5s, before), 0) << before.str();

  const std::string a = host.handshake();
  auto hung = std::async(std::launch::async, [&] {
    return prefilter(host.stub(), a, "slow-scheduler", full_table(1), 600s);
  });
  auto future = reported.get_future();
  ASSERT_EQ(future.wait_for(120s), std::future_status::ready);
  const HungHook h = future.get();
  EXPECT_EQ(h.plugin, "SleepyFilter");
  EXPECT_EQ(h.hook, Hook::kFilter);
  EXPECT_GE(h.running, 300ms);
  EXPECT_NE(h.message().find("plugin SleepyFilter has been inside filter() "
                             "for at least"),
            std::string::npos)
      << h.message();

  std::ostringstream after;
  EXPECT_EQ(probe_health(listen, 5s, after), 1);
  EXPECT_NE(after.str().find("not SERVING"), std::string::npos) << after.str();

  std::ofstream(release) << "go";
  EXPECT_TRUE(hung.get().ok());
  EXPECT_EQ(reports.load(), 1);  // one report per stuck call
}

}  // namespace
}  // namespace schedplug::host::testing
