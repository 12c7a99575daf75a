// Many callers at once on the real server, the way several schedulers (and
// a scheduler racing its own retries) use one host: concurrent sessions
// with their own tables, two callers sharing one session, handshakes that
// evict sessions other callers are using, refresh threads running, and the
// metrics page read meanwhile. Every answer must still equal the direct
// evaluation of its own request. Written to give ThreadSanitizer and
// AddressSanitizer (the build-tsan/ and build-asan/ runs of the test
// command) every shared structure of the host to watch.
//
// It runs twice: through gRPC, and in-process (the callers call the
// HostService methods directly, as gRPC's handler threads do). Under
// ThreadSanitizer only the in-process run is checked: Debian's gRPC is not
// instrumented, so TSan cannot see how gRPC hands calls between its own
// threads and reports races inside it (docs/sanitizers.md).
#include <gtest/gtest.h>

#include <grpcpp/server_context.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "host/transport/grpc/host_service.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

// How callers reach the host: through its gRPC server, or by calling its
// service in-process with a bare ServerContext (no deadline, never
// cancelled).
enum class Transport { kGrpc, kInProcess };

std::string handshake(RunningHost& host, Transport transport) {
  const v1::HandshakeRequest request = test_handshake_request();
  v1::HandshakeResponse response;
  grpc::Status status;
  if (transport == Transport::kGrpc) {
    grpc::ClientContext context;
    status = host.stub().Handshake(&context, request, &response);
  } else {
    grpc::ServerContext context;
    status = host.app().service().Handshake(&context, &request, &response);
  }
  if (!status.ok()) {
    throw std::runtime_error("handshake failed: " + status.error_message());
  }
  return response.session_id();
}

grpc::Status prefilter(RunningHost& host, Transport transport,
                       const v1::PreFilterRequest& request,
                       v1::PreFilterResponse* response) {
  if (transport == Transport::kGrpc) {
    grpc::ClientContext context;
    return host.stub().PreFilter(&context, request, response);
  }
  grpc::ServerContext context;
  return host.app().service().PreFilter(&context, &request, response);
}

grpc::Status prescore(RunningHost& host, Transport transport,
                      const v1::PreScoreRequest& request,
                      v1::PreScoreResponse* response) {
  if (transport == Transport::kGrpc) {
    grpc::ClientContext context;
    return host.stub().PreScore(&context, request, response);
  }
  grpc::ServerContext context;
  return host.app().service().PreScore(&context, &request, response);
}

// One caller: sends a full table, then pods, each with PreFilter and (when
// no filter errored) PreScore, comparing both with the direct evaluation.
// A session that disappeared (evicted by the bound) is handshaken again.
struct Caller {
  Caller(RunningHost& h, Transport t, const DirectEvaluator& d, uint64_t s)
      : host(h), transport(t), direct(d), seed(s) {}

  RunningHost& host;
  Transport transport;
  const DirectEvaluator& direct;
  uint64_t seed;
  std::string profile = "default-scheduler";
  std::string* shared_session = nullptr;  // null: an own session
  std::mutex* shared_mutex = nullptr;

  int pods = 0;
  int lost_sessions = 0;
  std::string failure;

  std::string session() {
    if (shared_session == nullptr) return own_session;
    std::lock_guard lock(*shared_mutex);
    return *shared_session;
  }
  void renew(const std::string& lost) {
    if (shared_session == nullptr) {
      own_session = handshake(host, transport);
      return;
    }
    std::lock_guard lock(*shared_mutex);
    if (*shared_session == lost) *shared_session = handshake(host, transport);
  }

  void run(int count) {
    RandomCluster rnd(seed);
    if (shared_session == nullptr) own_session = handshake(host, transport);
    for (int i = 0; i < count && failure.empty(); ++i) {
      // A full table every time: with a shared session the other caller
      // may have replaced the table since this caller's last call.
      std::map<uint32_t, v1::Node> nodes;
      const size_t size = 5 + rnd.rng()() % 40;
      v1::PreFilterRequest request;
      request.set_scheduler_name(profile);
      request.mutable_delta()->set_full(true);
      request.mutable_delta()->set_new_version(seed * 1000 + i + 1);
      rnd.known_nodes.clear();
      for (uint32_t slot = 0; slot < size; ++slot) {
        const std::string name =
            "s" + std::to_string(seed) + "-" + std::to_string(slot);
        nodes[slot] = rnd.node(slot, name, i + 1, 8);
        *request.mutable_delta()->add_upserts() = nodes[slot];
        rnd.known_nodes.push_back(name);
      }
      *request.mutable_pod() = rnd.pod();
      const std::string id = session();
      request.set_session_id(id);
      v1::PreFilterResponse response;
      const grpc::Status status =
          prefilter(host, transport, request, &response);
      if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        ++lost_sessions;
        renew(id);
        continue;
      }
      if (!status.ok()) {
        failure = "PreFilter failed: " + status.error_message();
        return;
      }
      const PreFilterAnswer got = decode(response);
      if (got != direct.prefilter(profile, request.pod(), nodes)) {
        failure = "PreFilter answer differs, seed " + std::to_string(seed) +
                  " pod " + std::to_string(i);
        return;
      }
      ++pods;
      // PreScore reads the table PreFilter left; with a shared session the
      // other caller may have replaced it, so only own sessions score.
      bool errored = false;
      for (const auto& [slot, r] : got.rejected)
        errored |= r.code == v1::CODE_ERROR;
      if (errored || shared_session != nullptr) continue;
      v1::PreScoreRequest score;
      score.set_session_id(id);
      score.set_scheduler_name(profile);
      *score.mutable_pod() = request.pod();
      score.set_table_version(response.table_version());
      std::vector<v1::Node> feasible;
      for (const auto& [slot, n] : nodes) {
        if (got.rejected.contains(slot)) continue;
        score.add_nodes(slot);
        feasible.push_back(n);
      }
      v1::PreScoreResponse scored;
      const grpc::Status s = prescore(host, transport, score, &scored);
      if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        ++lost_sessions;
        renew(id);
        continue;
      }
      if (!s.ok()) {
        failure = "PreScore failed: " + s.error_message();
        return;
      }
      if (decode(scored) != direct.prescore(profile, request.pod(), feasible)) {
        failure = "PreScore answer differs, seed " + std::to_string(seed) +
                  " pod " + std::to_string(i);
        return;
      }
    }
  }

 private:
  std::string own_session;
};

void run_concurrently(Transport transport) {
  // Few sessions allowed, so the handshakes below evict sessions that
  // callers are using.
  RunningHost host([](HostOptions& o) { o.service.max_sessions = 6; });
  const DirectEvaluator direct(host.dir() / "scheduler-config.yaml",
                               test_plugin_dir());

  std::string shared = handshake(host, transport);
  std::mutex shared_mutex;
  std::vector<std::unique_ptr<Caller>> callers;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    callers.push_back(std::make_unique<Caller>(host, transport, direct, seed));
  }
  for (uint64_t seed = 5; seed <= 6; ++seed) {
    auto c = std::make_unique<Caller>(host, transport, direct, seed);
    c->shared_session = &shared;
    c->shared_mutex = &shared_mutex;
    callers.push_back(std::move(c));
  }

  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (auto& c : callers) threads.emplace_back([&c] { c->run(60); });
  // Churn: new sessions (evicting old ones), the refresh plugins' profiles
  // (their refresh runs on host threads every 50 ms) and the metrics page.
  std::atomic<int> churn_rounds{0};
  std::thread churn([&] {
    while (!done.load()) {
      const std::string id = handshake(host, transport);
      v1::PreFilterRequest request;
      request.set_session_id(id);
      request.set_scheduler_name("refresh-fail");
      request.mutable_delta()->set_full(true);
      request.mutable_delta()->set_new_version(1);
      v1::Node* node = request.mutable_delta()->add_upserts();
      node->set_index(0);
      node->set_name("churn-node");
      v1::PreFilterResponse response;
      const grpc::Status s = prefilter(host, transport, request, &response);
      EXPECT_TRUE(s.ok() ||
                  s.error_code() == grpc::StatusCode::FAILED_PRECONDITION)
          << s.error_message();
      EXPECT_NE(host.app().metrics().text().find("schedplug_"),
                std::string::npos);
      churn_rounds.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  churn.join();

  int pods = 0, lost = 0;
  for (const auto& c : callers) {
    EXPECT_EQ(c->failure, "") << "caller " << c->seed;
    pods += c->pods;
    lost += c->lost_sessions;
  }
  std::cout << pods << " pods answered by 6 concurrent callers, " << lost
            << " sessions lost to eviction and renewed, " << churn_rounds.load()
            << " churn handshakes\n";
  EXPECT_GT(pods, 0);
  EXPECT_GT(churn_rounds.load(), 0);
}

TEST(Concurrency, SessionsRefreshAndMetricsAtOnceAnswerLikeDirectEvaluation) {
  run_concurrently(Transport::kGrpc);
}

TEST(InProcessConcurrency,
     SessionsRefreshAndMetricsAtOnceAnswerLikeDirectEvaluation) {
  run_concurrently(Transport::kInProcess);
}

}  // namespace
}  // namespace schedplug::host::testing
