// Shared by the server tests and the benchmark: the test configuration,
// random pods and node tables, a host running in-process on a unix socket
// with a client for it, and a direct in-process evaluator that runs the
// same plugins without the table, the chain or gRPC (the reference the
// server's answers are compared with).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "host/app/host_app.hpp"
#include "host/plugin/plugin_instance.hpp"
#include "schedplug/v1/schedplug.grpc.pb.h"

namespace schedplug::host::testing {

// Where the test plugins (.so) are built.
std::filesystem::path test_plugin_dir();

// GET http://127.0.0.1:port/metrics: the whole HTTP response, status line
// and headers included; "" when nothing answers.
std::string http_get_metrics(int port);

// A fresh directory under /tmp (short, so socket paths fit), removed on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Profiles of the test configuration:
//   default-scheduler  filters LabelFilter, ResourceFit, FreeCpu;
//                      scorers FreeCpu (LINEAR), Latency (REVERSE),
//                      SpreadScore (own NormalizeScore)
//   bad-scheduler      scorers FreeCpu, BadNormalize (out of range)
//   slow-scheduler     filters FreeCpu, SleepyFilter (sleep_ms, release_file)
//   applies-scheduler  AppliesCounter (counts applies() calls), SkipFilter
//                      (returns SKIP from filter)
//   timeout-scheduler  SleepyFilter (20 ms a node, timeout 50ms, Ignore),
//                      FreeCpu
//   refresh-fail       RefreshProbe whose refresh always fails
//   refresh-hang       RefreshProbe whose first refresh hangs hang_ms
//   podcycle-scheduler PodCycle (pod_begin / pod_end, logged to
//                      pod_cycle_log)
struct TestConfigOptions {
  int sleep_ms = 5;
  int hang_ms = 50;
  // SleepyFilter returns early once this file exists (empty: never).
  std::filesystem::path release_file = {};
  // Where PodCycle logs its pod_begin / pod_end calls (empty:
  // pod_cycle.log in the config's directory).
  std::filesystem::path pod_cycle_log = {};
  // default-scheduler's FreeCpu (a Filter and a Score) gets a shadow
  // candidate: another load of its own file (host/shadow/).
  bool shadow_free_cpu = false;
};
std::filesystem::path write_test_config(const std::filesystem::path& dir,
                                        const TestConfigOptions& options = {});
// The Handshake a shim reading that config would send.
v1::HandshakeRequest test_handshake_request();

// Pod ns/pod-<uid> with `labels` (what the hook probes of hook_plugins/
// act on).
v1::Pod labelled_pod(const std::string& uid,
                     const std::map<std::string, std::string>& labels = {});

// A host started in-process on unix:<tmp>/host.sock, and a client for it.
class RunningHost {
 public:
  explicit RunningHost(const std::function<void(HostOptions&)>& tweak = {},
                       const TestConfigOptions& config = {});
  ~RunningHost();

  HostApp& app() { return *app_; }
  v1::Host::Stub& stub() { return *stub_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  // Handshakes with test_handshake_request(); returns the session id.
  std::string handshake();

 private:
  TempDir dir_;
  std::unique_ptr<HostApp> app_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Host::Stub> stub_;
};

// A client of a host's fast-path socket that writes frames as the shim
// does.
class FastClient {
 public:
  explicit FastClient(const std::filesystem::path& socket);
  ~FastClient();
  FastClient(const FastClient&) = delete;
  FastClient& operator=(const FastClient&) = delete;
  bool connected() const { return connected_; }

  // One frame of `body`, its length header `length` when given.
  bool send_frame(const std::string& body, std::optional<uint32_t> length = {});
  // The next answer, or nothing when the host closed the connection.
  std::optional<v1::FastResponse> receive();
  std::optional<v1::FastResponse> call(const v1::FastRequest& request);
  // True when the host closed the connection (read returns end of stream).
  bool closed_by_host();

 private:
  bool read_full(char* data, size_t n);
  int fd_ = -1;
  bool connected_ = false;
};

// Random nodes and pods shaped like a real cluster: 20 labels per node
// (hostname, zone, instance type, ...), resources, some taints.
class RandomCluster {
 public:
  explicit RandomCluster(uint64_t seed) : rng_(seed) {}
  v1::Node node(uint32_t slot, const std::string& name, int64_t generation,
                int labels = 20);
  v1::Pod pod();
  std::mt19937_64& rng() { return rng_; }
  // Rare labels that make plugins return ERROR (on by default).
  bool inject_errors = true;
  // Node names the pod generator may name in test/filter-error.
  std::vector<std::string> known_nodes;

 private:
  int64_t uniform(int64_t lo, int64_t hi);
  std::mt19937_64 rng_;
  uint64_t pods_ = 0;
};

// A decoded PreFilter answer: slot -> (plugin, code, reason).
struct Rejection {
  std::string plugin;
  int code = 0;
  std::string reason;
  bool operator==(const Rejection&) const = default;
};
struct PreFilterAnswer {
  std::vector<std::string> plugins;
  std::vector<bool> skipped;
  std::map<uint32_t, Rejection> rejected;
  bool operator==(const PreFilterAnswer&) const = default;
};
PreFilterAnswer decode(const v1::PreFilterResponse& response);

struct ScoreAnswer {
  std::string plugin;
  bool skipped = false;
  std::vector<int64_t> scores;
  std::string error;
  bool operator==(const ScoreAnswer&) const = default;
};
std::vector<ScoreAnswer> decode(const v1::PreScoreResponse& response);

// Runs the plugins of a profile the obvious way: node by node, plugin by
// plugin, on its own PluginInstances.
class DirectEvaluator {
 public:
  DirectEvaluator(const std::filesystem::path& config,
                  const std::filesystem::path& plugin_dir);
  ~DirectEvaluator();
  PreFilterAnswer prefilter(const std::string& profile, const v1::Pod& pod,
                            const std::map<uint32_t, v1::Node>& nodes) const;
  std::vector<ScoreAnswer> prescore(const std::string& profile,
                                    const v1::Pod& pod,
                                    const std::vector<v1::Node>& nodes) const;

 private:
  struct Profile;
  const Profile& profile(const std::string& name) const;
  std::vector<std::unique_ptr<Profile>> profiles_;
};

}  // namespace schedplug::host::testing
