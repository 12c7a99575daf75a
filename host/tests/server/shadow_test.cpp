// Shadow mode (host/shadow/): a candidate build named in
// args.schedplug.shadow runs beside the live plugin on the same pods and
// nodes after the live answer went out. It never changes an answer, and
// the metrics count exactly the pods it disagrees on: Reloadable v2 (the
// candidate) rejects every node for pods labelled reload/picky=yes and
// scores the nodes the other way round for them; v1 (live) does neither.
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "host/loader/plugin_file_check.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kProfile[] = "shadow-scheduler";
constexpr int kNodes = 10;

std::filesystem::path version_file(int v) {
  return std::filesystem::path(SCHEDPLUG_RELOADABLE_DIR) /
         ("reloadable_v" + std::to_string(v) + ".so");
}

std::string config_yaml(const std::string& shadow) {
  return std::string(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: shadow-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: Reloadable
    pluginConfig:
      - name: Reloadable
        args:
          schedplug:
            shadow: ")") +
         shadow + "\"\n";
}

class Shadow : public ::testing::Test {
 protected:
  // Starts the host with v1 live and `shadow` (a file under the plugin
  // directory) as its candidate; false with the start-up diagnostics in
  // `error` when the host refuses to start.
  // `candidate`: the version file of the candidate (6: v2 with its Score);
  // `configure` changes the host's options further.
  bool start(const std::string& shadow, std::string* error = nullptr,
             int candidate = 6,
             std::function<void(HostOptions&)> configure = {}) {
    plugins_ = dir_.path() / "plugins";
    std::filesystem::create_directories(plugins_ / "candidates");
    // v1 and v2, each with its Score (reloadable_v5 and _v6).
    std::filesystem::copy_file(version_file(5), plugins_ / "reloadable.so");
    std::filesystem::copy_file(version_file(candidate),
                               plugins_ / "candidates" / "reloadable.so");
    config_ = dir_.path() / "config.yaml";
    std::ofstream(config_) << config_yaml(shadow);
    try {
      host_ = std::make_unique<RunningHost>([&](HostOptions& o) {
        o.config = config_;
        o.plugins = plugins_;
        o.watch = false;
        if (configure) configure(o);
      });
    } catch (const std::exception& e) {
      if (error != nullptr) *error = e.what();
      return false;
    }
    v1::HandshakeRequest request;
    request.set_protocol_version(v1::PROTOCOL_VERSION_1);
    request.set_client_id("shadow-test");
    v1::ProfilePlugins* p = request.add_profiles();
    p->set_scheduler_name(kProfile);
    p->add_plugins("Reloadable");
    grpc::ClientContext context;
    v1::HandshakeResponse response;
    const grpc::Status s =
        host_->stub().Handshake(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    session_ = response.session_id();
    return true;
  }

  v1::Pod pod(const std::string& name, bool picky) {
    v1::Pod p;
    p.set_namespace_("default");
    p.set_name(name);
    p.set_uid("uid-" + name);
    if (picky) {
      v1::KeyValue* kv = p.add_labels();
      kv->set_key("reload/picky");
      kv->set_value("yes");
    }
    return p;
  }

  // One cycle: PreFilter over the nodes, then PreScore on those that
  // passed. Returns (rejected nodes, scores). With `ask_ahead` both ask
  // for scores ahead, which a profile whose scorer has a candidate does not
  // get: its PreScore answers normalized scores and feeds the candidate.
  std::pair<int, std::vector<int64_t>> cycle(const v1::Pod& p,
                                             bool ask_ahead = true) {
    v1::PreFilterRequest request;
    request.set_session_id(session_);
    request.set_scheduler_name(kProfile);
    *request.mutable_pod() = p;
    request.set_score_ahead(ask_ahead);
    v1::NodeTableDelta* delta = request.mutable_delta();
    if (!sent_table_) {
      delta->set_full(true);
      for (uint32_t slot = 0; slot < kNodes; ++slot) {
        v1::Node* n = delta->add_upserts();
        n->set_index(slot);
        n->set_name("node-" + std::to_string(slot));
        n->set_generation(1);
      }
      sent_table_ = true;
    } else {
      delta->set_base_version(1);
    }
    delta->set_new_version(1);
    v1::PreFilterResponse filtered;
    {
      grpc::ClientContext context;
      const grpc::Status s =
          host_->stub().PreFilter(&context, request, &filtered);
      EXPECT_TRUE(s.ok()) << s.error_message();
      EXPECT_FALSE(filtered.has_scores_ahead());
    }
    v1::PreScoreRequest score;
    score.set_session_id(session_);
    score.set_scheduler_name(kProfile);
    *score.mutable_pod() = p;
    score.set_table_version(1);
    score.set_raw(ask_ahead);
    for (uint32_t slot = 0; slot < kNodes; ++slot) score.add_nodes(slot);
    v1::PreScoreResponse scored;
    grpc::ClientContext context;
    const grpc::Status s = host_->stub().PreScore(&context, score, &scored);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<int64_t> scores;
    if (scored.plugins_size() == 1) {
      EXPECT_EQ(scored.plugins(0).normalization(), v1::NORMALIZATION_BY_PLUGIN);
      EXPECT_TRUE(scored.plugins(0).raw().empty());
      scores.assign(scored.plugins(0).scores().begin(),
                    scored.plugins(0).scores().end());
    }
    return {filtered.rejected_nodes_size(), scores};
  }

  double metric(const std::string& series) {
    const std::string text = host_->app().metrics().text();
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return 0;
    return std::stod(text.substr(at + series.size() + 2));
  }
  // Waits until the candidate ran on `pods` pods at both points.
  bool wait_for(double pods) {
    for (auto until = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < until;) {
      if (metric(kFilterPods) >= pods && metric(kScorePods) >= pods)
        return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  static constexpr const char* kFilterPods =
      R"(schedplug_shadow_pods_total{extension_point="filter",plugin="Reloadable"})";
  static constexpr const char* kScorePods =
      R"(schedplug_shadow_pods_total{extension_point="score",plugin="Reloadable"})";

  TempDir dir_;
  std::filesystem::path plugins_, config_;
  std::unique_ptr<RunningHost> host_;
  std::string session_;
  bool sent_table_ = false;
};

TEST_F(Shadow, CountsExactlyThePodsTheCandidateDisagreesOn) {
  ASSERT_TRUE(start("candidates/reloadable.so"));
  const std::vector<int64_t> v1_scores{90, 80, 70, 60, 50, 40, 30, 20, 10, 0};
  int picky = 0;
  for (int i = 0; i < 20; ++i) {
    const bool is_picky = i % 3 == 0;  // 7 of 20
    picky += is_picky;
    const auto [rejected, scores] =
        cycle(pod("p" + std::to_string(i), is_picky));
    // The live answers are v1's, whatever the candidate says.
    EXPECT_EQ(rejected, 0) << "pod " << i;
    EXPECT_EQ(scores, v1_scores) << "pod " << i;
  }
  ASSERT_TRUE(wait_for(20)) << host_->app().metrics().text();
  EXPECT_EQ(metric(kFilterPods), 20);
  EXPECT_EQ(metric(kScorePods), 20);
  EXPECT_EQ(
      metric(
          R"(schedplug_shadow_disagreements_total{kind="verdicts",plugin="Reloadable"})"),
      picky);
  EXPECT_EQ(
      metric(
          R"(schedplug_shadow_differing_verdicts_total{plugin="Reloadable"})"),
      picky * kNodes);
  EXPECT_EQ(
      metric(
          R"(schedplug_shadow_disagreements_total{kind="rank",plugin="Reloadable"})"),
      picky);
  EXPECT_EQ(
      metric(
          R"(schedplug_shadow_disagreements_total{kind="best_node",plugin="Reloadable"})"),
      picky);
  EXPECT_EQ(
      metric(
          R"(schedplug_shadow_disagreements_total{kind="error",plugin="Reloadable"})"),
      0);
  EXPECT_EQ(metric("schedplug_shadow_dropped_total"), 0);
}

// A candidate whose filter hangs past --hook-hard-limit is abandoned: the
// host stays SERVING and keeps answering with the live plugin, where a
// hung live hook makes it exit (HungPlugin tests).
// The candidate, its version and its digest are visible from start-up,
// before it disagrees with anything: in Status (`schedplug-host probe
// --details`), in schedplug_shadow_build_info, and in the line of every
// hot reload, which names the candidates running from then on.
TEST_F(Shadow, TheCandidateAndItsBuildAreNamedBeforeItDisagrees) {
  // The host's log, read once the host is gone (no thread writes then).
  // The logger and its text outlive the test: a thread that took the
  // default logger just before it was put back may still write.
  static std::ostringstream& log = *new std::ostringstream;
  static const auto capture = std::make_shared<spdlog::logger>(
      "shadow-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  struct Restore {
    std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
    ~Restore() { spdlog::set_default_logger(previous); }
  } restore;
  spdlog::set_default_logger(capture);
  ASSERT_TRUE(start("candidates/reloadable.so"));
  const std::string sha =
      file_sha256(plugins_ / "candidates" / "reloadable.so");
  grpc::ClientContext context;
  v1::StatusResponse status;
  ASSERT_TRUE(
      host_->stub().Status(&context, v1::StatusRequest(), &status).ok());
  ASSERT_EQ(status.shadows_size(), 1);
  EXPECT_EQ(status.shadows(0).plugin(), "Reloadable");
  EXPECT_EQ(status.shadows(0).version(), "2.0.0");
  EXPECT_EQ(status.shadows(0).file(), "candidates/reloadable.so");
  EXPECT_EQ(status.shadows(0).sha256(), sha);

  std::ostringstream details;
  ASSERT_TRUE(print_host_status(
      "unix://" + (host_->dir() / "host.sock").string(), 5s, details));
  EXPECT_NE(details.str().find("1 shadow candidate runs beside the live "
                               "plugin (decisions stay the live plugins'):\n"
                               "  Reloadable candidate 2.0.0  "
                               "candidates/reloadable.so  sha256 " +
                               sha + "\n"),
            std::string::npos)
      << details.str();

  const std::string metrics = host_->app().metrics().text();
  EXPECT_NE(metrics.find("schedplug_shadow_build_info{file=\"candidates/"
                         "reloadable.so\",plugin=\"Reloadable\",sha256=\"" +
                         sha + "\",version=\"2.0.0\"} 1\n"),
            std::string::npos)
      << metrics;

  // A reload that swaps only the candidate (v1 with its Score now) says
  // which candidate runs, with its build.
  std::filesystem::path next = plugins_ / "candidates" / "next.so";
  std::filesystem::copy_file(version_file(5), next);
  std::filesystem::rename(next, plugins_ / "candidates" / "reloadable.so");
  const ReloadOutcome outcome = host_->app().reload();
  EXPECT_TRUE(outcome.swapped);
  const std::string v1_sha =
      file_sha256(plugins_ / "candidates" / "reloadable.so");
  host_.reset();
  EXPECT_NE(log.str().find("shadow candidate of Reloadable: Reloadable 2.0.0 "
                           "from candidates/reloadable.so (sha256 " +
                           sha + "), in shadow-scheduler"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("reload: plugin set 2 serves from now on: the same "
                           "plugins and configuration; shadow candidates: "
                           "Reloadable 1.0.0 (candidates/reloadable.so, "
                           "sha256 " +
                           v1_sha.substr(0, 12) + ")"),
            std::string::npos)
      << log.str();
}

TEST_F(Shadow, ACandidateThatHangsIsAbandonedAndTheLivePathGoesOn) {
  std::atomic<int> exits{0};
  ASSERT_TRUE(start("candidates/reloadable.so", nullptr, /*candidate=*/7,
                    [&](HostOptions& o) {
                      o.hook_hard_limit = 300ms;
                      o.on_hung_hook = [&](const HungHook&) { ++exits; };
                    }));
  const std::vector<int64_t> v1_scores{90, 80, 70, 60, 50, 40, 30, 20, 10, 0};
  EXPECT_EQ(cycle(pod("p0", false)), std::make_pair(0, v1_scores));
  EXPECT_EQ(cycle(pod("p1", true)), std::make_pair(0, v1_scores));
  const std::string hung =
      R"(schedplug_shadow_disagreements_total{kind="hung",plugin="Reloadable"})";
  for (auto until = std::chrono::steady_clock::now() + 10s;
       metric(hung) < 1 && std::chrono::steady_clock::now() < until;)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(metric(hung), 1) << host_->app().metrics().text();
  EXPECT_TRUE(host_->app().shadow_abandoned());
  // The live path goes on; the candidate runs no more (and, no longer
  // shadowed, the profile's scores could come ahead again: not asked here).
  for (int i = 2; i < 6; ++i) {
    EXPECT_EQ(cycle(pod("p" + std::to_string(i), i % 2 == 1),
                    /*ask_ahead=*/false),
              std::make_pair(0, v1_scores));
  }
  std::ostringstream health;
  EXPECT_EQ(probe_health(host_->app().target(), 2s, health), 0) << health.str();
  EXPECT_EQ(exits, 0) << "a hung candidate must not stop the host";
  EXPECT_EQ(metric(kFilterPods), 1) << "only p0 was compared";
}

TEST_F(Shadow, ACandidateThatDoesNotLoadOrIsAnotherPluginIsAnError) {
  std::string error;
  EXPECT_FALSE(start("candidates/missing.so", &error));
  EXPECT_NE(error.find("args.schedplug.shadow candidates/missing.so"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

TEST_F(Shadow, ACandidateReportingAnotherNameIsRefused) {
  std::filesystem::create_directories(dir_.path() / "plugins" / "candidates");
  std::filesystem::copy_file(
      test_plugin_dir() / "label_filter.so",
      dir_.path() / "plugins" / "candidates" / "other.so");
  std::string error;
  EXPECT_FALSE(start("candidates/other.so", &error));
  EXPECT_NE(error.find("reports the plugin name \"LabelFilter\""),
            std::string::npos)
      << error;
}

// args.schedplug.shadow names a file inside the plugin directory. A path
// out of it, absolute or with "..", is refused before anything is opened:
// the candidate here is a plugin whose constructor leaves a marker file.
TEST_F(Shadow, APathOutOfThePluginDirectoryIsRefusedBeforeLoading) {
  const auto outside = dir_.path() / "outside";
  std::filesystem::create_directories(outside);
  std::filesystem::copy_file(SCHEDPLUG_CTOR_MARKER_PLUGIN,
                             outside / "reloadable.so");
  const auto marker = dir_.path() / "constructor-ran";
  ::setenv("SCHEDPLUG_TEST_MARKER", marker.c_str(), 1);
  struct Unset {
    ~Unset() { ::unsetenv("SCHEDPLUG_TEST_MARKER"); }
  } unset;
  const std::string absolute = (outside / "reloadable.so").string();
  for (const std::string& path :
       {absolute, std::string("../outside/reloadable.so")}) {
    std::filesystem::remove_all(dir_.path() / "plugins");
    std::string error;
    EXPECT_FALSE(start(path, &error)) << path;
    EXPECT_NE(error.find("args.schedplug.shadow is \"" + path + "\", "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("a shadow candidate is loaded only from the plugin "
                         "directory: copy the file into it"),
              std::string::npos)
        << error;
    EXPECT_FALSE(std::filesystem::exists(marker))
        << path << ": the file outside the plugin directory was opened";
    std::filesystem::remove(marker);
  }
}

}  // namespace
}  // namespace schedplug::host::testing
