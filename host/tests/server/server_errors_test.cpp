// Malformed requests get a clear gRPC error, and the host keeps serving.
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <future>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using grpc::StatusCode;

class ServerErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = std::make_unique<RunningHost>(
        [](HostOptions& o) { o.max_message_bytes = 1 << 20; });
    session_ = host_->handshake();
    // A table of three nodes at version 1.
    RandomCluster rnd(1);
    v1::NodeTableDelta d;
    d.set_full(true);
    d.set_new_version(1);
    for (uint32_t i = 0; i < 3; ++i) {
      *d.add_upserts() = rnd.node(i, "n" + std::to_string(i), 1);
    }
    ASSERT_TRUE(prefilter(d).ok());
  }

  grpc::Status prefilter(const v1::NodeTableDelta& delta,
                         const std::string& session = {},
                         const std::string& profile = "default-scheduler",
                         v1::PreFilterResponse* out = nullptr) {
    v1::PreFilterRequest request;
    request.set_session_id(session.empty() ? session_ : session);
    request.set_scheduler_name(profile);
    request.mutable_pod()->set_name("p");
    *request.mutable_delta() = delta;
    v1::PreFilterResponse response;
    grpc::ClientContext context;
    grpc::Status s = host_->stub().PreFilter(&context, request, &response);
    if (out) *out = response;
    return s;
  }

  v1::NodeTableDelta delta_on(uint64_t version) {
    v1::NodeTableDelta d;
    d.set_base_version(version);
    d.set_new_version(version + 1);
    return d;
  }

  // The host still answers correctly after whatever happened before.
  void expect_still_serving() {
    v1::PreFilterResponse response;
    v1::NodeTableDelta empty;
    empty.set_base_version(1);
    const grpc::Status s = prefilter(empty, {}, "default-scheduler", &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.table_version(), 1u);
    EXPECT_EQ(response.plugins_size(), 3);
  }

  static void expect_error(const grpc::Status& s, StatusCode code,
                           const std::string& words) {
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(words), std::string::npos)
        << s.error_message();
  }

  std::unique_ptr<RunningHost> host_;
  std::string session_;
};

TEST_F(ServerErrors, UnknownSession) {
  expect_error(prefilter(delta_on(1), "no-such-session"),
               StatusCode::FAILED_PRECONDITION,
               "unknown session \"no-such-session\": the host restarted or the "
               "session expired; handshake again and send the full node table");
  expect_still_serving();
}

TEST_F(ServerErrors, DeltaNamingAnUnknownNodeIndex) {
  v1::NodeTableDelta d = delta_on(1);
  d.add_removed(42);
  expect_error(prefilter(d), StatusCode::INVALID_ARGUMENT,
               "removed lists node index 42, which holds no node");
  expect_still_serving();
}

TEST_F(ServerErrors, DuplicateNodeNames) {
  RandomCluster rnd(2);
  v1::NodeTableDelta d = delta_on(1);
  *d.add_upserts() = rnd.node(5, "n0", 2);  // n0 lives at index 0
  expect_error(prefilter(d), StatusCode::INVALID_ARGUMENT,
               "duplicate node name \"n0\"");
  v1::NodeTableDelta full;
  full.set_full(true);
  full.set_new_version(9);
  *full.add_upserts() = rnd.node(0, "x", 1);
  *full.add_upserts() = rnd.node(1, "x", 1);
  expect_error(prefilter(full), StatusCode::INVALID_ARGUMENT,
               "duplicate node name \"x\"");
  expect_still_serving();
}

TEST_F(ServerErrors, StaleTableVersionAsksForResync) {
  expect_error(prefilter(delta_on(0)), StatusCode::FAILED_PRECONDITION,
               "send the full node table");
  v1::PreScoreRequest request;
  request.set_session_id(session_);
  request.set_scheduler_name("default-scheduler");
  request.set_table_version(7);
  v1::PreScoreResponse response;
  grpc::ClientContext context;
  expect_error(host_->stub().PreScore(&context, request, &response),
               StatusCode::FAILED_PRECONDITION, "version mismatch");
  expect_still_serving();
}

TEST_F(ServerErrors, PreFilterWithAMalformedWindowLeavesTheTable) {
  // A delta to version 2 (a fourth node), refused for its `evaluate`
  // before the table is reached: no delta applied, no trailer.
  RandomCluster rnd(4);
  v1::NodeTableDelta d = delta_on(1);
  *d.add_upserts() = rnd.node(3, "n3", 1);
  for (const std::vector<uint32_t>& evaluate :
       {std::vector<uint32_t>{0}, std::vector<uint32_t>{0, 2, 1},
        std::vector<uint32_t>{2, 2}, std::vector<uint32_t>{0, 4, 3, 1}}) {
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name("default-scheduler");
    request.mutable_pod()->set_name("p");
    *request.mutable_delta() = d;
    for (uint32_t slot : evaluate) request.add_evaluate(slot);
    v1::PreFilterResponse response;
    grpc::ClientContext context;
    const grpc::Status s =
        host_->stub().PreFilter(&context, request, &response);
    expect_error(s, StatusCode::INVALID_ARGUMENT, "PreFilter: evaluate");
    EXPECT_EQ(
        context.GetServerTrailingMetadata().count("schedplug-table-version"),
        0u);
  }
  // Still at version 1: the same delta applies now.
  v1::PreFilterResponse response;
  const grpc::Status s = prefilter(d, {}, "default-scheduler", &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.table_version(), 2u);
  EXPECT_FALSE(response.windowed());
}

TEST_F(ServerErrors, PreScoreOfAnEmptySlot) {
  v1::PreScoreRequest request;
  request.set_session_id(session_);
  request.set_scheduler_name("default-scheduler");
  request.set_table_version(1);
  request.add_nodes(0);
  request.add_nodes(17);
  v1::PreScoreResponse response;
  grpc::ClientContext context;
  expect_error(host_->stub().PreScore(&context, request, &response),
               StatusCode::INVALID_ARGUMENT, "node index 17 holds no node");
  expect_still_serving();
}

TEST_F(ServerErrors, OversizedMessageIsRefusedByGrpc) {
  v1::NodeTableDelta d = delta_on(1);
  v1::PreFilterRequest request;
  request.set_session_id(session_);
  request.set_scheduler_name("default-scheduler");
  v1::KeyValue* kv = request.mutable_pod()->add_annotations();
  kv->set_key("huge");
  kv->set_value(
      std::string(2 << 20, 'x'));  // 2 MiB > --max-message-bytes 1 MiB
  *request.mutable_delta() = d;
  v1::PreFilterResponse response;
  grpc::ClientContext context;
  const grpc::Status s = host_->stub().PreFilter(&context, request, &response);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  expect_still_serving();
}

TEST_F(ServerErrors, UnknownPluginAndProfile) {
  v1::FilterRequest request;
  request.set_session_id(session_);
  request.set_scheduler_name("default-scheduler");
  request.mutable_node()->set_name("n0");
  request.add_plugins("NoSuchPlugin");
  v1::FilterResponse response;
  grpc::ClientContext context;
  expect_error(
      host_->stub().Filter(&context, request, &response),
      StatusCode::INVALID_ARGUMENT,
      "unknown plugin \"NoSuchPlugin\": profile \"default-scheduler\" has "
      "no native Filter plugin of that name");
  expect_error(prefilter(delta_on(1), {}, "no-such-profile"),
               StatusCode::INVALID_ARGUMENT,
               "unknown profile \"no-such-profile\"");
  expect_still_serving();
}

TEST_F(ServerErrors, HandshakeNameMismatchesAreListed) {
  v1::HandshakeRequest request = test_handshake_request();
  request.mutable_profiles(0)->set_plugins(0, "labelFilter");
  request.mutable_profiles(0)->add_plugins("Missing");
  v1::ProfilePlugins* extra = request.add_profiles();
  extra->set_scheduler_name("other-scheduler");
  v1::HandshakeResponse response;
  grpc::ClientContext context;
  const grpc::Status s = host_->stub().Handshake(&context, request, &response);
  expect_error(s, StatusCode::INVALID_ARGUMENT, "3 problems");
  expect_error(
      s, StatusCode::INVALID_ARGUMENT,
      "plugin \"labelFilter\" is not an in-tree plugin and no loaded .so "
      "reports it; did you mean \"LabelFilter\"");
  expect_error(s, StatusCode::INVALID_ARGUMENT, "plugin \"Missing\"");
  expect_error(s, StatusCode::INVALID_ARGUMENT, "profile \"other-scheduler\"");

  v1::HandshakeRequest old = test_handshake_request();
  old.set_protocol_version(v1::PROTOCOL_VERSION_UNSPECIFIED);
  grpc::ClientContext c2;
  expect_error(host_->stub().Handshake(&c2, old, &response),
               StatusCode::INVALID_ARGUMENT, "unsupported protocol version 0");
  expect_still_serving();
}

TEST_F(ServerErrors, FilterOnOneNodeSentExplicitly) {
  RandomCluster rnd(3);
  v1::FilterRequest request;
  request.set_session_id(session_);
  request.set_scheduler_name("default-scheduler");
  request.mutable_pod()->set_name("p");
  v1::Resource* cpu = request.mutable_pod()->add_requests();
  cpu->set_name("cpu");
  cpu->set_value(1'000'000);
  *request.mutable_node() = rnd.node(99, "preempt-dry-run", 1);
  v1::FilterResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(host_->stub().Filter(&context, request, &response).ok());
  EXPECT_EQ(response.code(), v1::CODE_UNSCHEDULABLE);
  EXPECT_EQ(response.plugin(), "ResourceFit");
  EXPECT_EQ(response.reason(), "Insufficient cpu");
}

TEST_F(ServerErrors, HealthServiceSaysServing) {
  grpc::GenericStub generic(host_->channel());
  grpc::ClientContext context;
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);  // HealthCheckRequest{service: ""}
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, "/grpc.health.v1.Health/Check",
                    grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status s = done.get_future().get();
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const auto& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));  // status: SERVING
}

}  // namespace
}  // namespace schedplug::host::testing

namespace schedplug::host::testing {
namespace {

TEST(Listen, TcpWithAnyPortWorksToo) {
  RunningHost host([](HostOptions& o) {
    o.listen = "127.0.0.1:0";
    o.security.insecure_tcp = true;
  });
  EXPECT_EQ(host.app().target().rfind("127.0.0.1:", 0), 0u);
  EXPECT_NE(host.app().target(), "127.0.0.1:0");
  EXPECT_FALSE(host.handshake().empty());
}

}  // namespace
}  // namespace schedplug::host::testing
