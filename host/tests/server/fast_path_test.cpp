// The fast-path socket: the same answers as gRPC, its errors as FastResponse
// codes with the table-version trailer, and bad frames refused without
// stopping the host.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <google/protobuf/util/message_differencer.h>

#include "host/transport/fastpath/fast_path_server.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using grpc::StatusCode;

class FastPath : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = std::make_unique<RunningHost>(
        [](HostOptions& o) { o.max_message_bytes = 1 << 20; });
    v1::HandshakeResponse hs;
    grpc::ClientContext context;
    ASSERT_TRUE(
        host_->stub().Handshake(&context, test_handshake_request(), &hs).ok());
    session_ = hs.session_id();
    ASSERT_EQ(hs.fast_path_socket(), "host.sock.fast");
    socket_ = host_->dir() / hs.fast_path_socket();
  }

  v1::PreFilterRequest prefilter_request(uint64_t base, uint64_t version,
                                         bool full, int nodes, uint64_t seed) {
    RandomCluster rnd(seed);
    rnd.inject_errors = false;
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name("default-scheduler");
    *request.mutable_pod() = rnd.pod();
    v1::NodeTableDelta* d = request.mutable_delta();
    d->set_full(full);
    d->set_base_version(base);
    d->set_new_version(version);
    for (int i = 0; i < nodes; ++i) {
      *d->add_upserts() =
          rnd.node(static_cast<uint32_t>(i), "n" + std::to_string(i), 1);
    }
    return request;
  }

  static v1::FastRequest fast(const v1::PreFilterRequest& r) {
    v1::FastRequest request;
    *request.mutable_pre_filter() = r;
    request.set_timeout_micros(5'000'000);
    return request;
  }

  std::unique_ptr<RunningHost> host_;
  std::string session_;
  std::filesystem::path socket_;
};

TEST_F(FastPath, AnswersAsGrpcDoesWithTheTableVersion) {
  // The same session's table moves the same way over either transport.
  FastClient client(socket_);
  ASSERT_TRUE(client.connected());
  const v1::PreFilterRequest first = prefilter_request(0, 1, true, 40, 7);
  const auto fast_answer = client.call(fast(first));
  ASSERT_TRUE(fast_answer.has_value());
  ASSERT_EQ(fast_answer->code(), 0) << fast_answer->message();
  ASSERT_TRUE(fast_answer->has_pre_filter());
  EXPECT_TRUE(fast_answer->has_table_version());
  EXPECT_EQ(fast_answer->table_version(), 1u);
  EXPECT_EQ(fast_answer->pre_filter().table_version(), 1u);

  // gRPC, an empty delta on version 1 with the same pod: the same verdicts.
  v1::PreFilterRequest again = first;
  again.mutable_delta()->Clear();
  again.mutable_delta()->set_base_version(1);
  again.mutable_delta()->set_new_version(1);
  v1::PreFilterResponse grpc_answer;
  grpc::ClientContext context;
  ASSERT_TRUE(host_->stub().PreFilter(&context, again, &grpc_answer).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      grpc_answer, fast_answer->pre_filter()))
      << grpc_answer.ShortDebugString() << "\nvs\n"
      << fast_answer->pre_filter().ShortDebugString();
  EXPECT_EQ(decode(grpc_answer), decode(fast_answer->pre_filter()));
  EXPECT_GT(decode(grpc_answer).rejected.size(), 0u);

  // PreScore over the fast path, on the table gRPC and it share.
  v1::FastRequest score;
  v1::PreScoreRequest* s = score.mutable_pre_score();
  s->set_session_id(session_);
  s->set_scheduler_name("default-scheduler");
  *s->mutable_pod() = first.pod();
  s->set_table_version(1);
  for (uint32_t slot = 0; slot < 40; ++slot) s->add_nodes(slot);
  const auto scored = client.call(score);
  ASSERT_TRUE(scored.has_value());
  ASSERT_EQ(scored->code(), 0) << scored->message();
  ASSERT_EQ(scored->pre_score().plugins_size(), 3);
  EXPECT_EQ(scored->pre_score().plugins(0).scores_size(), 40);
}

TEST_F(FastPath, FilterNodesAnswersAsGrpcDoes) {
  FastClient client(socket_);
  v1::PreFilterRequest first = prefilter_request(0, 1, true, 40, 9);
  first.add_evaluate(30);
  first.add_evaluate(40);
  const auto windowed = client.call(fast(first));
  ASSERT_TRUE(windowed.has_value());
  ASSERT_EQ(windowed->code(), 0) << windowed->message();
  EXPECT_TRUE(windowed->pre_filter().windowed());

  // The rest of the table, over either transport: the same answer.
  v1::FastRequest rest;
  v1::FilterNodesRequest* r = rest.mutable_filter_nodes();
  r->set_session_id(session_);
  r->set_scheduler_name("default-scheduler");
  *r->mutable_pod() = first.pod();
  r->set_table_version(1);
  r->add_evaluate(0);
  r->add_evaluate(30);
  rest.set_timeout_micros(5'000'000);
  const auto fast_answer = client.call(rest);
  ASSERT_TRUE(fast_answer.has_value());
  ASSERT_EQ(fast_answer->code(), 0) << fast_answer->message();
  ASSERT_TRUE(fast_answer->has_pre_filter());
  EXPECT_TRUE(fast_answer->pre_filter().windowed());
  v1::PreFilterResponse grpc_answer;
  grpc::ClientContext context;
  ASSERT_TRUE(host_->stub()
                  .FilterNodes(&context, rest.filter_nodes(), &grpc_answer)
                  .ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      grpc_answer, fast_answer->pre_filter()))
      << grpc_answer.ShortDebugString() << "\nvs\n"
      << fast_answer->pre_filter().ShortDebugString();
  EXPECT_GT(grpc_answer.rejected_nodes_size(), 0);
  for (uint32_t slot : grpc_answer.rejected_nodes()) EXPECT_LT(slot, 30u);

  // Its errors as codes too: a table version the host is not at.
  r->set_table_version(2);
  const auto stale = client.call(rest);
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_FALSE(stale->has_pre_filter());
}

// NoteCycles over the fast path: taken into the recent cycles as over gRPC,
// answered on the same connection, an unknown session refused.
TEST_F(FastPath, NotesGoIntoTheRecentCycles) {
  FastClient client(socket_);
  const v1::PreFilterRequest cycle = prefilter_request(0, 1, true, 5, 11);
  ASSERT_EQ(client.call(fast(cycle))->code(), 0);
  v1::FastRequest note;
  v1::CycleNotes* notes = note.mutable_notes();
  notes->set_session_id(session_);
  v1::Placement* p = notes->add_placed();
  p->set_pod_uid(cycle.pod().uid());
  p->set_unschedulable(true);
  p->set_message("0/5 nodes are available: 5 Insufficient cpu.");
  const auto noted = client.call(note);
  ASSERT_TRUE(noted.has_value());
  ASSERT_EQ(noted->code(), 0) << noted->message();
  EXPECT_TRUE(noted->has_notes());
  EXPECT_EQ(noted->notes().identity().epoch(),
            host_->app().pipeline().identity().epoch);
  const RecentCycles::Found found =
      host_->app().recent_cycles().find(cycle.pod().uid());
  ASSERT_EQ(found.cycles.size(), 1u);
  EXPECT_TRUE(found.cycles[0].unschedulable());
  EXPECT_EQ(found.cycles[0].unschedulable_message(), p->message());

  notes->set_session_id("no-such-session");
  const auto lost = client.call(note);
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_FALSE(lost->has_notes());
}

TEST_F(FastPath, ErrorsCarryTheirCodeAndTheTrailer) {
  FastClient client(socket_);
  ASSERT_TRUE(client.call(fast(prefilter_request(0, 1, true, 3, 1)))->code() ==
              0);
  // A delta on the wrong version: FAILED_PRECONDITION, and the trailer says
  // where the host's table is (the shim resyncs or recovers from it).
  const auto stale = client.call(fast(prefilter_request(5, 6, false, 1, 2)));
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_TRUE(stale->has_table_version());
  EXPECT_EQ(stale->table_version(), 1u);
  EXPECT_FALSE(stale->has_pre_filter());
  // An unknown session: refused before the table, so no trailer.
  v1::PreFilterRequest unknown = prefilter_request(1, 2, false, 1, 3);
  unknown.set_session_id("no-such-session");
  const auto lost = client.call(fast(unknown));
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_NE(lost->message().find("unknown session \"no-such-session\""),
            std::string::npos)
      << lost->message();
  EXPECT_FALSE(lost->has_table_version());
}

TEST_F(FastPath, BadFramesAreRefusedAndTheHostKeepsServing) {
  FastClient client(socket_);
  // Not a FastRequest: INVALID_ARGUMENT, the connection stays usable.
  ASSERT_TRUE(client.send_frame(std::string("\xff\xff\xff\xff", 4)));
  auto answer = client.receive();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code(), static_cast<int>(StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(answer->message().find("is not a schedplug.v1.FastRequest"),
            std::string::npos)
      << answer->message();
  // A request naming no call.
  answer = client.call(v1::FastRequest());
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code(), static_cast<int>(StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(answer->message().find("names no call"), std::string::npos);
  // Still answering on the same connection.
  answer = client.call(fast(prefilter_request(0, 1, true, 3, 1)));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code(), 0) << answer->message();

  // A frame over --max-message-bytes: RESOURCE_EXHAUSTED, then closed
  // (the rest of the frame is never read).
  FastClient big(socket_);
  ASSERT_TRUE(big.send_frame("", 2u << 20));
  answer = big.receive();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code(), static_cast<int>(StatusCode::RESOURCE_EXHAUSTED));
  EXPECT_NE(answer->message().find("over --max-message-bytes"),
            std::string::npos)
      << answer->message();
  EXPECT_TRUE(big.closed_by_host());

  // A client that sends half a frame and goes away.
  {
    FastClient half(socket_);
    ASSERT_TRUE(half.send_frame("abc", 100));
  }
  // Others are unaffected.
  FastClient after(socket_);
  answer = after.call(fast(prefilter_request(1, 2, false, 1, 4)));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code(), 0) << answer->message();
}

TEST_F(FastPath, SocketIsPrivateAndGoesWithTheHost) {
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Shutdown ends idle connections promptly and removes the socket.
  FastClient idle(socket_);
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.call(fast(prefilter_request(0, 1, true, 3, 1))).has_value());
  const auto start = std::chrono::steady_clock::now();
  host_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(idle.closed_by_host());
  EXPECT_FALSE(std::filesystem::exists(socket_));
}

TEST(FastPathOff, HandshakeOffersNoSocket) {
  RunningHost host([](HostOptions& o) { o.fast_path = false; });
  v1::HandshakeResponse hs;
  grpc::ClientContext context;
  ASSERT_TRUE(
      host.stub().Handshake(&context, test_handshake_request(), &hs).ok());
  EXPECT_EQ(hs.fast_path_socket(), "");
  EXPECT_FALSE(std::filesystem::exists(host.dir() / "host.sock.fast"));
}

TEST(FastPathServerLimits, ConnectionsBeyondTheLimitAreClosed) {
  RunningHost host;
  FastPathServer server(host.app().pipeline(), 1 << 20, 1);
  int first[2], second[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, first), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, second), 0);
  server.serve(first[1]);
  server.serve(second[1]);  // over the limit of one: closed
  char c;
  EXPECT_EQ(::recv(second[0], &c, 1, 0), 0);
  EXPECT_EQ(server.connections(), 1u);
  server.stop();
  EXPECT_EQ(::recv(first[0], &c, 1, 0), 0);
  EXPECT_EQ(server.connections(), 0u);
  ::close(first[0]);
  ::close(second[0]);
}

}  // namespace
}  // namespace schedplug::host::testing
