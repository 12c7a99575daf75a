// The host's identity in every answer and the WatchSession stream: the
// shim keeps verdicts beyond their cycle only while both say that the host
// that computed them is still the one it talks to.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "host/identity/host_identity.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<RunningHost> host_with_heartbeat(
    std::chrono::milliseconds beat,
    const std::function<void(HostOptions&)>& more = {}) {
  return std::make_unique<RunningHost>([=](HostOptions& o) {
    o.service.heartbeat = beat;
    if (more) more(o);
  });
}

// One WatchSession call read on the test's thread.
struct Watch {
  Watch(v1::Host::Stub& stub, const std::string& session) {
    v1::WatchSessionRequest request;
    request.set_session_id(session);
    context.set_deadline(std::chrono::system_clock::now() + 20s);
    reader = stub.WatchSession(&context, request);
  }
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> reader;
};

TEST(HostIdentity, HandshakeNamesTheHostAndEveryPluginFile) {
  RunningHost host;
  grpc::ClientContext context;
  v1::HandshakeResponse hs;
  ASSERT_TRUE(
      host.stub().Handshake(&context, test_handshake_request(), &hs).ok());
  EXPECT_NE(hs.identity().epoch(), 0u);
  EXPECT_NE(hs.identity().build(), 0u);
  ASSERT_GT(hs.plugins_size(), 0);
  for (const v1::PluginInfo& info : hs.plugins()) {
    EXPECT_TRUE(std::regex_match(info.sha256(), std::regex("[0-9a-f]{64}")))
        << info.name() << ": " << info.sha256();
    EXPECT_EQ(info.sha256(), file_sha256(info.file())) << info.name();
  }
}

TEST(HostIdentity, EveryAnswerCarriesIt) {
  RunningHost host;
  grpc::ClientContext hs_context;
  v1::HandshakeResponse hs;
  ASSERT_TRUE(
      host.stub().Handshake(&hs_context, test_handshake_request(), &hs).ok());
  RandomCluster cluster(7);
  v1::PreFilterRequest pre;
  pre.set_session_id(hs.session_id());
  pre.set_scheduler_name("default-scheduler");
  *pre.mutable_pod() = cluster.pod();
  pre.mutable_delta()->set_full(true);
  pre.mutable_delta()->set_new_version(1);
  for (uint32_t i = 0; i < 4; ++i) {
    *pre.mutable_delta()->add_upserts() =
        cluster.node(i, "n" + std::to_string(i), 1);
  }
  v1::PreFilterResponse pre_answer;
  grpc::ClientContext pre_context;
  ASSERT_TRUE(host.stub().PreFilter(&pre_context, pre, &pre_answer).ok());
  EXPECT_EQ(pre_answer.identity().SerializeAsString(),
            hs.identity().SerializeAsString());

  v1::PreScoreRequest score;
  score.set_session_id(hs.session_id());
  score.set_scheduler_name("default-scheduler");
  *score.mutable_pod() = pre.pod();
  score.set_table_version(1);
  score.add_nodes(0);
  v1::PreScoreResponse score_answer;
  grpc::ClientContext score_context;
  ASSERT_TRUE(host.stub().PreScore(&score_context, score, &score_answer).ok());
  EXPECT_EQ(score_answer.identity().SerializeAsString(),
            hs.identity().SerializeAsString());

  v1::FilterRequest one;
  one.set_session_id(hs.session_id());
  one.set_scheduler_name("default-scheduler");
  *one.mutable_pod() = pre.pod();
  *one.mutable_node() = cluster.node(0, "n0", 1);
  v1::FilterResponse one_answer;
  grpc::ClientContext one_context;
  ASSERT_TRUE(host.stub().Filter(&one_context, one, &one_answer).ok());
  EXPECT_EQ(one_answer.identity().SerializeAsString(),
            hs.identity().SerializeAsString());
}

TEST(HostIdentity, BuildFollowsConfigAndPluginsEpochFollowsTheProcess) {
  TempDir dir;
  const auto config = write_test_config(dir.path());
  const auto plugins = load_plugin_directory(test_plugin_dir()).plugins;
  ASSERT_FALSE(plugins.empty());
  const HostIdentity a = make_host_identity(config, plugins);
  const HostIdentity b = make_host_identity(config, plugins);
  EXPECT_EQ(a.build, b.build) << "same configuration and plugin files";
  EXPECT_NE(a.epoch, b.epoch) << "each host process has its own epoch";

  std::vector<std::shared_ptr<PluginLibrary>> fewer(plugins.begin() + 1,
                                                    plugins.end());
  EXPECT_NE(make_host_identity(config, fewer).build, a.build)
      << "another set of plugin builds";
  std::ofstream(config, std::ios::app) << "\n# changed\n";
  EXPECT_NE(make_host_identity(config, plugins).build, a.build)
      << "another configuration";
}

TEST(SessionWatch, SendsTheIdentityAtOnceThenHeartbeats) {
  auto host = host_with_heartbeat(50ms);
  grpc::ClientContext hs_context;
  v1::HandshakeResponse hs;
  ASSERT_TRUE(
      host->stub().Handshake(&hs_context, test_handshake_request(), &hs).ok());
  Watch watch(host->stub(), hs.session_id());
  const auto start = std::chrono::steady_clock::now();
  v1::SessionEvent event;
  ASSERT_TRUE(watch.reader->Read(&event));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 40ms)
      << "the first event comes at once, not after a heartbeat";
  EXPECT_EQ(event.identity().SerializeAsString(),
            hs.identity().SerializeAsString());
  EXPECT_EQ(event.heartbeat_ms(), 50u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(watch.reader->Read(&event)) << "heartbeat " << i;
    EXPECT_EQ(event.identity().epoch(), hs.identity().epoch());
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(host->app().service().open_watches(), 1u);
  watch.context.TryCancel();
  while (watch.reader->Read(&event)) {
  }
  EXPECT_EQ(watch.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  for (int i = 0; i < 100 && host->app().service().open_watches() > 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(host->app().service().open_watches(), 0u)
      << "a cancelled watch is forgotten";
}

TEST(SessionWatch, AnUnknownSessionIsRefusedAsTheOtherCallsAre) {
  auto host = host_with_heartbeat(50ms);
  Watch watch(host->stub(), "no-such-session");
  v1::SessionEvent event;
  EXPECT_FALSE(watch.reader->Read(&event));
  const grpc::Status status = watch.reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("unknown session \"no-such-session\""),
            std::string::npos)
      << status.error_message();
}

TEST(SessionWatch, EndsWhenTheSessionIsEvicted) {
  // A second session of the same peer evicts the first.
  auto host = host_with_heartbeat(
      10s, [](HostOptions& o) { o.service.max_sessions_per_peer = 1; });
  const std::string first = host->handshake();
  Watch watch(host->stub(), first);
  v1::SessionEvent event;
  ASSERT_TRUE(watch.reader->Read(&event));
  const auto start = std::chrono::steady_clock::now();
  host->handshake();
  EXPECT_FALSE(watch.reader->Read(&event));
  const grpc::Status status = watch.reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << status.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s)
      << "the eviction ends the watch at once, not at the next heartbeat";
}

TEST(SessionWatch, ShutdownEndsEveryWatchWithUnavailableAndDoesNotWait) {
  auto host = host_with_heartbeat(10s);
  Watch a(host->stub(), host->handshake());
  Watch b(host->stub(), host->handshake());
  v1::SessionEvent event;
  ASSERT_TRUE(a.reader->Read(&event));
  ASSERT_TRUE(b.reader->Read(&event));
  const auto start = std::chrono::steady_clock::now();
  host->app().shutdown(std::chrono::milliseconds(5000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s)
      << "open watches must not hold the drain";
  for (Watch* w : {&a, &b}) {
    EXPECT_FALSE(w->reader->Read(&event));
    EXPECT_EQ(w->reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  }
}

}  // namespace
}  // namespace schedplug::host::testing
