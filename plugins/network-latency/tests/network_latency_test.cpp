// NetworkLatency, loaded from its built .so with the SDK's test kit (the
// host's rules): refresh from a file, scores, reversed normalization.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin_testing.hpp"

namespace schedplug::testing {
namespace {

namespace fs = std::filesystem;

class NetworkLatencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("network_latency_test." + std::to_string(::getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    file_ = dir_ / "latency.txt";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& text) {
    // Write-then-rename, as an agent should, so a reader never sees half a
    // file.
    const fs::path tmp = dir_ / "latency.txt.tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, file_);
  }
  std::unique_ptr<Plugin> create(const std::string& extra = "") {
    return create_plugin(
        NETWORK_LATENCY_SO,
        R"({"latencyFile": ")" + file_.string() + "\"" + extra + "}");
  }
  int64_t raw(const Plugin& p, const std::string& node) {
    const ScoreResult r = p.score(pod_->view(), make_node(node)->view());
    EXPECT_EQ(r.code, SCHEDPLUG_SUCCESS) << r.reason;
    return r.score;
  }

  fs::path dir_, file_;
  std::unique_ptr<Pod> pod_ = make_pod({});
};

TEST_F(NetworkLatencyTest, DescriptorDeclaresScoreRefreshAndReversePolicy) {
  write("a 1\n");
  auto lib = create();  // the kit creates what it loads; the args are needed
  EXPECT_EQ(lib->name(), "NetworkLatency");
  EXPECT_TRUE(lib->has_score());
  EXPECT_FALSE(lib->has_filter());
  EXPECT_TRUE(lib->has_refresh());
  EXPECT_GT(lib->descriptor().refresh_period_ms, 0u);
  EXPECT_EQ(lib->descriptor().normalize_score, nullptr);
  EXPECT_EQ(lib->descriptor().normalize_policy, SCHEDPLUG_NORMALIZE_REVERSE);
}

TEST_F(NetworkLatencyTest, RefreshReadsTheFileAndUnknownNodesGetTheDefault) {
  write("# agent output\nfast 1.5\nslow 40\n");
  auto p = create(R"(, "defaultLatencyMs": 25)");
  ASSERT_TRUE(p->refresh().ok());
  EXPECT_EQ(raw(*p, "fast"), 1500);
  EXPECT_EQ(raw(*p, "slow"), 40000);
  EXPECT_EQ(raw(*p, "unknown"), 25000);
}

TEST_F(NetworkLatencyTest, BeforeAnyRefreshEveryNodeGetsTheDefault) {
  write("fast 1\n");
  auto p = create();  // default of the default: 100 ms
  EXPECT_EQ(raw(*p, "fast"), 100000);
}

TEST_F(NetworkLatencyTest, RewritingTheFileChangesScores) {
  write("a 10\nb 20\n");
  auto p = create();
  ASSERT_TRUE(p->refresh().ok());
  EXPECT_LT(raw(*p, "a"), raw(*p, "b"));
  write("a 30\nb 20\n");
  ASSERT_TRUE(p->refresh().ok());
  EXPECT_EQ(raw(*p, "a"), 30000);
  EXPECT_GT(raw(*p, "a"), raw(*p, "b"));
}

TEST_F(NetworkLatencyTest, GarbledFileKeepsTheOldDataAndNamesTheLine) {
  write("a 10\nb 20\n");
  auto p = create();
  ASSERT_TRUE(p->refresh().ok());
  write("a 5\nb twenty\n");
  const Verdict v = p->refresh();
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_NE(v.reason.find(file_.string() + ":2:"), std::string::npos)
      << v.reason;
  EXPECT_EQ(raw(*p, "a"), 10000) << "old table must stay in use";
  EXPECT_EQ(raw(*p, "b"), 20000);
}

TEST_F(NetworkLatencyTest, MissingFileIsARefreshErrorAndKeepsOldData) {
  write("a 10\n");
  auto p = create();
  ASSERT_TRUE(p->refresh().ok());
  fs::remove(file_);
  const Verdict v = p->refresh();
  EXPECT_EQ(v.code, SCHEDPLUG_ERROR);
  EXPECT_NE(v.reason.find("cannot read latency file"), std::string::npos)
      << v.reason;
  EXPECT_EQ(raw(*p, "a"), 10000);
}

TEST_F(NetworkLatencyTest, ReverseNormalizationMakesTheLowestLatencyWin) {
  write("near 2\nmid 11\nfar 20\n");
  auto p = create(R"(, "defaultLatencyMs": 20)");
  ASSERT_TRUE(p->refresh().ok());
  std::vector<std::string> names = {"near", "mid", "far", "unknown"};
  std::vector<schedplug_node_score> scores;
  for (const std::string& n : names) {
    scores.push_back({schedplug_str{n.data(), n.size()}, raw(*p, n)});
  }
  const Verdict v = p->normalize(pod_->view(), scores);
  ASSERT_TRUE(v.ok()) << v.reason;
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 50);
  EXPECT_EQ(scores[2].score, 0);
  EXPECT_EQ(scores[3].score, 0);
}

TEST_F(NetworkLatencyTest, RefreshPeriodComesFromArgs) {
  // The descriptor's 5 s is only the default; create() sets the instance's.
  EXPECT_EQ(create()->settings().refresh_period_ms, 5000u);
  EXPECT_EQ(
      create(R"(, "refreshPeriod": "1m30s")")->settings().refresh_period_ms,
      90000u);
  EXPECT_EQ(
      create(R"(, "refreshPeriod": "250ms")")->settings().refresh_period_ms,
      250u);
}

TEST_F(NetworkLatencyTest, OnePodStateServesEveryNode) {
  write("a 10\nb 20\n");
  auto p = create();
  ASSERT_TRUE(p->refresh().ok());
  const PodScope scope = p->begin_pod(pod_->view());
  ASSERT_TRUE(scope.error().empty()) << scope.error();
  EXPECT_TRUE(scope.runs_score());
  ASSERT_NE(scope.pod().state, nullptr);
  // The pod keeps the table it began with, even after a refresh publishes
  // a new one: one consistent snapshot for all of its nodes.
  write("a 30\nb 40\n");
  ASSERT_TRUE(p->refresh().ok());
  EXPECT_EQ(p->score(scope.pod(), make_node("a")->view()).score, 10000);
  EXPECT_EQ(p->score(scope.pod(), make_node("b")->view()).score, 20000);
  // Without state (a host older than ABI v1.1) the current table is used.
  EXPECT_EQ(raw(*p, "a"), 30000);
}

TEST_F(NetworkLatencyTest, BadArgsFailCreate) {
  const struct {
    std::string args;
    const char* expect;
  } cases[] = {
      {"{}", "missing arg \"latencyFile\""},
      {R"({"latencyFile": "/x", "defaultLatencyMs": -1})",
       "arg \"defaultLatencyMs\" must be a number from 0 to 3600000"},
      {R"({"latencyFile": "/x", "defaultLatencyMs": "5"})",
       "arg \"defaultLatencyMs\" must be a number"},
      {R"({"latencyfile": "/x"})", "did you mean \"latencyFile\""},
      {R"({"latencyFile": "/x", "refreshPerod": "5s"})",
       "unknown arg \"refreshPerod\"; did you mean \"refreshPeriod\"?"},
      {R"({"latencyFile": "/x", "refreshPeriod": 5})",
       "arg \"refreshPeriod\" must be a duration such as \"5s\""},
      {R"({"latencyFile": "/x", "refreshPeriod": "5 s"})",
       "arg \"refreshPeriod\" must be a duration"},
      {R"({"latencyFile": "/x", "refreshPeriod": "10ms"})",
       "arg \"refreshPeriod\" must be from 100ms to 24h, got 10ms"},
  };
  for (const auto& c : cases) {
    try {
      create_plugin(NETWORK_LATENCY_SO, c.args);
      ADD_FAILURE() << "create accepted " << c.args;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << c.args << " -> " << e.what();
    }
  }
}

// Score from several threads while Refresh swaps tables: every score must be
// one of the two published figures (never torn, never a crash). Run under
// ThreadSanitizer with -DSCHEDPLUG_SANITIZE=thread for the data-race check.
TEST_F(NetworkLatencyTest, ConcurrentScoreAndRefresh) {
  write("a 10\n");
  auto p = create();
  ASSERT_TRUE(p->refresh().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      auto node = make_node("a");
      while (!stop.load(std::memory_order_relaxed)) {
        const ScoreResult r = p->score(pod_->view(), node->view());
        if (r.code != SCHEDPLUG_SUCCESS ||
            (r.score != 10000 && r.score != 20000)) {
          bad.fetch_add(1);
        }
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    write(i % 2 == 0 ? "a 20\n" : "a 10\n");
    EXPECT_TRUE(p->refresh().ok());
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace schedplug::testing
