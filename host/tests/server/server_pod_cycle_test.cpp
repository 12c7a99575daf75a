// Per-pod state through the real server: PreFilter begins the pod once per
// plugin (pod_begin), the cycle's single-node Filter and PreScore calls
// see the same state, and pod_end runs exactly once per pod_begin, at the
// end of the cycle: after PreScore, at the next PreFilter of the session
// (a cycle that never reached PreScore), on session eviction and at
// shutdown. PodCycle (plugins/pod_cycle.c) logs every pod_begin / pod_end.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

constexpr const char* kProfile = "podcycle-scheduler";

std::vector<std::string> log_lines(const std::filesystem::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Fails the test unless every "begin X n" has exactly one "end X n" after
// it and every end matches a begin.
void expect_balanced(const std::vector<std::string>& lines) {
  std::map<std::string, int> open;
  for (const std::string& line : lines) {
    std::istringstream words(line);
    std::string what, pod, n;
    words >> what >> pod >> n;
    const std::string state = pod + " " + n;
    if (what == "begin") {
      EXPECT_EQ(open[state]++, 0) << "state begun twice: " << line;
    } else {
      EXPECT_EQ(open[state]--, 1) << "end without a live begin: " << line;
    }
  }
  for (const auto& [state, count] : open)
    EXPECT_EQ(count, 0) << "state never ended: " << state;
}

v1::Node node(uint32_t slot, const std::string& name, bool reject) {
  v1::Node n;
  n.set_index(slot);
  n.set_name(name);
  n.set_generation(1);
  if (reject) {
    v1::KeyValue* kv = n.add_labels();
    kv->set_key("reject");
  }
  return n;
}

v1::Pod pod(const std::string& name, const std::string& gate = "") {
  v1::Pod p;
  p.set_namespace_("ns");
  p.set_name(name);
  p.set_uid("uid-" + name);
  if (!gate.empty()) {
    v1::KeyValue* kv = p.add_labels();
    kv->set_key("gate");
    kv->set_value(gate);
  }
  return p;
}

class PodCycleTest : public ::testing::Test {
 protected:
  explicit PodCycleTest(const std::function<void(HostOptions&)>& tweak = {})
      : host_(std::make_unique<RunningHost>(
            tweak, TestConfigOptions{.pod_cycle_log = log_file_})) {}

  std::filesystem::path log() const { return log_file_; }

  v1::PreFilterResponse prefilter(const std::string& session,
                                  const v1::Pod& p) {
    v1::PreFilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    if (!sent_table_.contains(session)) {
      sent_table_[session] = true;
      v1::NodeTableDelta* d = request.mutable_delta();
      d->set_full(true);
      d->set_new_version(1);
      *d->add_upserts() = node(0, "n0", false);
      *d->add_upserts() = node(1, "n1", true);
    } else {
      request.mutable_delta()->set_base_version(1);
      request.mutable_delta()->set_new_version(1);
    }
    v1::PreFilterResponse response;
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().PreFilter(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }
  v1::FilterResponse filter(const std::string& session, const v1::Pod& p) {
    v1::FilterRequest request;
    request.set_session_id(session);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    *request.mutable_node() = node(0, "elsewhere", true);
    v1::FilterResponse response;
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().Filter(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }
  v1::PluginScores prescore(const std::string& session, const v1::Pod& p) {
    v1::PreScoreRequest request;
    request.set_session_id(session);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    request.set_table_version(1);
    request.add_nodes(0);
    v1::PreScoreResponse response;
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().PreScore(&c, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (response.plugins_size() != 1) {
      ADD_FAILURE() << "PreScore answered " << response.plugins_size()
                    << " plugins";
      return {};
    }
    return response.plugins(0);
  }

  TempDir log_dir_;
  std::filesystem::path log_file_ = log_dir_.path() / "pod_cycle.log";
  std::map<std::string, bool> sent_table_;
  std::unique_ptr<RunningHost> host_;
};

TEST_F(PodCycleTest, OneStatePerCycleEndedAfterPreScore) {
  const std::string session = host_->handshake();
  const v1::Pod p = pod("p");
  const v1::PreFilterResponse pf = prefilter(session, p);
  ASSERT_EQ(pf.reasons_size(), 1);
  EXPECT_EQ(pf.reasons(0), "node(s) reject p (state 1)");
  EXPECT_EQ(pf.not_applying_size(), 0);
  // The same cycle's single-node Filter sees PreFilter's state.
  EXPECT_EQ(filter(session, p).reason(), "node(s) reject p (state 1)");
  EXPECT_EQ(log_lines(log()), std::vector<std::string>{"begin p 1"});
  const v1::PluginScores scores = prescore(session, p);
  ASSERT_EQ(scores.scores_size(), 1) << scores.error();
  EXPECT_EQ(scores.scores(0), 1) << "PreScore saw another state";
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1"}));

  // After PreScore ended the cycle, a late call for the pod begins and
  // ends its own state.
  EXPECT_EQ(filter(session, p).reason(), "node(s) reject p (state 2)");
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1", "begin p 2",
                                      "end p 2"}));
}

TEST_F(PodCycleTest, AbandonedCycleEndsAtTheNextPreFilter) {
  const std::string session = host_->handshake();
  prefilter(session, pod("a"));
  EXPECT_EQ(log_lines(log()), std::vector<std::string>{"begin a 1"});
  // Another pod's call does not touch the cycle: it gets its own state.
  EXPECT_EQ(filter(session, pod("x")).reason(), "node(s) reject x (state 2)");
  // The next cycle ends a's state before it begins b's.
  const v1::PreFilterResponse pf = prefilter(session, pod("b"));
  ASSERT_EQ(pf.reasons_size(), 1);
  EXPECT_EQ(pf.reasons(0), "node(s) reject b (state 3)");
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin a 1", "begin x 2", "end x 2",
                                      "end a 1", "begin b 3"}));
  // The same pod again is a new cycle too (a retry after its cycle ended).
  prefilter(session, pod("b"));
  const auto lines = log_lines(log());
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[5], "end b 3");
  EXPECT_EQ(lines[6], "begin b 4");
}

TEST_F(PodCycleTest, GatesAndFailedPodBegin) {
  const std::string session = host_->handshake();
  v1::PreFilterResponse pf = prefilter(session, pod("nf", "no-filter"));
  ASSERT_EQ(pf.skipped_size(), 1);
  EXPECT_TRUE(pf.skipped(0));
  EXPECT_EQ(pf.not_applying_size(), 0) << "its Score still runs";
  v1::PluginScores scores = prescore(session, pod("nf", "no-filter"));
  EXPECT_FALSE(scores.skipped());
  ASSERT_EQ(scores.scores_size(), 1) << scores.error();
  EXPECT_EQ(scores.scores(0), 1);

  pf = prefilter(session, pod("none", "none"));
  ASSERT_EQ(pf.not_applying_size(), 1);
  EXPECT_EQ(pf.not_applying(0), "PodCycle");
  EXPECT_TRUE(prescore(session, pod("none", "none")).skipped());

  // A failed pod_begin fails the pod on every node, names the plugin, and
  // has no pod_end.
  pf = prefilter(session, pod("f", "fail"));
  EXPECT_FALSE(pf.skipped(0));
  ASSERT_EQ(pf.rejected_nodes_size(), 2);
  EXPECT_EQ(pf.codes(0), v1::CODE_ERROR);
  EXPECT_EQ(pf.reasons(pf.reason(0)),
            "plugin PodCycle failed to prepare the pod (pod_begin): label "
            "gate=fail");
  scores = prescore(session, pod("f", "fail"));
  EXPECT_EQ(scores.error(),
            "plugin PodCycle failed to prepare the pod (pod_begin): label "
            "gate=fail");
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin nf 1", "end nf 1", "begin none 2",
                                      "end none 2"}));
}

// A profile without native Filter plugins sends its delta with PreScore
// (PreScoreRequest.delta), its only call: the host applies the delta as
// PreFilter does and begins and ends the pod's state within the call.
TEST_F(PodCycleTest, PreScoreWithDeltaIsTheCyclesOnlyCall) {
  const std::string session = host_->handshake();
  auto prescore_with = [&](const v1::Pod& p, const v1::NodeTableDelta& delta,
                           std::vector<uint32_t> nodes,
                           v1::PreScoreResponse& response,
                           std::string* trailer_version = nullptr) {
    v1::PreScoreRequest request;
    request.set_session_id(session);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    *request.mutable_delta() = delta;
    for (uint32_t n : nodes) request.add_nodes(n);
    grpc::ClientContext c;
    const grpc::Status s = host_->stub().PreScore(&c, request, &response);
    if (trailer_version != nullptr) {
      const auto& trailers = c.GetServerTrailingMetadata();
      auto it = trailers.find("schedplug-table-version");
      *trailer_version = it == trailers.end() ? ""
                                              : std::string(it->second.data(),
                                                            it->second.size());
    }
    return s;
  };
  v1::NodeTableDelta full;
  full.set_full(true);
  full.set_new_version(1);
  *full.add_upserts() = node(0, "n0", false);
  *full.add_upserts() = node(1, "n1", true);
  v1::PreScoreResponse response;
  grpc::Status s = prescore_with(pod("p"), full, {0, 1}, response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.table_version(), 1u);
  ASSERT_EQ(response.plugins_size(), 1);
  EXPECT_EQ(response.plugins(0).scores_size(), 2)
      << response.plugins(0).error();
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1"}));

  // A pod whose PreFilter cycle never reached PreScore ends at the next
  // delta-carrying PreScore, which adds a node and scores it.
  sent_table_[session] = true;
  prefilter(session, pod("a"));
  v1::NodeTableDelta add;
  add.set_base_version(1);
  add.set_new_version(2);
  *add.add_upserts() = node(2, "n2", false);
  response.Clear();
  s = prescore_with(pod("b"), add, {2}, response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.table_version(), 2u);
  ASSERT_EQ(response.plugins_size(), 1);
  EXPECT_EQ(response.plugins(0).scores_size(), 1);
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1", "begin a 2",
                                      "end a 2", "begin b 3", "end b 3"}));

  // A delta for another base version is refused as PreFilter refuses it,
  // with the table's version in the trailer, and changes nothing.
  v1::NodeTableDelta stale;
  stale.set_base_version(7);
  stale.set_new_version(8);
  std::string version;
  response.Clear();
  s = prescore_with(pod("c"), stale, {0}, response, &version);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(version, "2");
  EXPECT_EQ(log_lines(log()).size(), 6u) << "no pod began";
}

class PodCycleEvictionTest : public PodCycleTest {
 protected:
  PodCycleEvictionTest()
      : PodCycleTest([](HostOptions& o) { o.service.max_sessions = 1; }) {}
};

TEST_F(PodCycleEvictionTest, EvictionEndsTheSessionsCycle) {
  const std::string first = host_->handshake();
  prefilter(first, pod("p"));
  EXPECT_EQ(log_lines(log()), std::vector<std::string>{"begin p 1"});
  // A second handshake evicts the first session (max_sessions 1).
  const std::string second = host_->handshake();
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1"}));
  // The evicted session's calls are refused; nothing begins or ends twice.
  v1::PreScoreRequest request;
  request.set_session_id(first);
  request.set_scheduler_name(kProfile);
  *request.mutable_pod() = pod("p");
  request.set_table_version(1);
  request.add_nodes(0);
  v1::PreScoreResponse response;
  grpc::ClientContext c;
  EXPECT_EQ(host_->stub().PreScore(&c, request, &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  prefilter(second, pod("q"));
  EXPECT_EQ(log_lines(log()),
            (std::vector<std::string>{"begin p 1", "end p 1", "begin q 2"}));
}

TEST_F(PodCycleTest, ShutdownEndsOpenCycles) {
  const std::string a = host_->handshake();
  const std::string b = host_->handshake();
  prefilter(a, pod("pa"));
  prefilter(b, pod("pb"));
  EXPECT_EQ(log_lines(log()).size(), 2u);
  host_.reset();  // the host shuts down with two cycles open
  const auto lines = log_lines(log());
  EXPECT_EQ(lines.size(), 4u);
  expect_balanced(lines);
}

TEST_F(PodCycleTest, ConcurrentCyclesOnManySessionsEndEveryState) {
  std::vector<std::string> sessions;
  for (int i = 0; i < 4; ++i) sessions.push_back(host_->handshake());
  for (const std::string& s : sessions) prefilter(s, pod("warm"));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < sessions.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const v1::Pod p =
            pod("p" + std::to_string(t) + "-" + std::to_string(i));
        prefilter(sessions[t], p);
        filter(sessions[t], p);
        if (i % 2 == 0) prescore(sessions[t], p);
      }
    });
  }
  for (auto& th : threads) th.join();
  host_.reset();
  const auto lines = log_lines(log());
  // 4 warm-up cycles and 80 more, one state each: every Filter joined
  // its cycle's state instead of beginning one.
  EXPECT_EQ(lines.size(), 2u * (4 + 80));
  expect_balanced(lines);
}

}  // namespace
}  // namespace schedplug::host::testing
