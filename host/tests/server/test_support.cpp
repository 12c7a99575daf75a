// The definitions behind test_support.hpp. One file: RunningHost starts from
// write_test_config's configuration, DirectEvaluator runs that configuration's
// plugins as the reference the host's answers are compared with, and
// RandomCluster makes the pods and nodes both are given.
#include "test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "host/config/resolve.hpp"
#include "host/config/scheduler_config.hpp"
#include "host/convert/convert.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/model/models.hpp"

namespace schedplug::host::testing {

std::filesystem::path test_plugin_dir() { return SCHEDPLUG_TEST_PLUGIN_DIR; }

FastClient::FastClient(const std::filesystem::path& socket) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
  connected_ =
      ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

FastClient::~FastClient() { ::close(fd_); }

bool FastClient::send_frame(const std::string& body,
                            std::optional<uint32_t> length) {
  const uint32_t n = length.value_or(static_cast<uint32_t>(body.size()));
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>(n >> (8 * i));
  frame += body;
  return ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL) ==
         static_cast<ssize_t>(frame.size());
}

std::optional<v1::FastResponse> FastClient::receive() {
  unsigned char header[4];
  if (!read_full(reinterpret_cast<char*>(header), 4)) return std::nullopt;
  const uint32_t n = uint32_t{header[0]} | uint32_t{header[1]} << 8 |
                     uint32_t{header[2]} << 16 | uint32_t{header[3]} << 24;
  std::string body(n, '\0');
  if (!read_full(body.data(), n)) return std::nullopt;
  v1::FastResponse response;
  if (!response.ParseFromString(body)) return std::nullopt;
  return response;
}

std::optional<v1::FastResponse> FastClient::call(
    const v1::FastRequest& request) {
  if (!send_frame(request.SerializeAsString())) return std::nullopt;
  return receive();
}

bool FastClient::closed_by_host() {
  char c;
  return ::recv(fd_, &c, 1, 0) == 0;
}

bool FastClient::read_full(char* data, size_t n) {
  while (n > 0) {
    const ssize_t got = ::recv(fd_, data, n, 0);
    if (got <= 0) return false;
    data += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

std::string http_get_metrics(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  const std::string request =
      "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::write(fd, request.data(), request.size()) < 0) {
    ::close(fd);
    return {};
  }
  std::string out;
  char buffer[8192];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

TempDir::TempDir() {
  std::string pattern = "/tmp/schedplug-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path write_test_config(const std::filesystem::path& dir,
                                        const TestConfigOptions& options) {
  const auto file = dir / "scheduler-config.yaml";
  std::ofstream out(file);
  out << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: LabelFilter
          - name: ResourceFit
          - name: FreeCpu
          - name: Latency
          - name: SpreadScore
)"
      << (options.shadow_free_cpu ? R"(    pluginConfig:
      - name: FreeCpu
        args:
          schedplug:
            shadow: free_cpu.so
)"
                                  : "")
      << R"(  - schedulerName: bad-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: FreeCpu
          - name: BadNormalize
  - schedulerName: slow-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: FreeCpu
          - name: SleepyFilter
    pluginConfig:
      - name: SleepyFilter
        args:
          sleep_ms: )"
      << options.sleep_ms << R"(
          release_file: ")"
      << options.release_file.string() << R"("
  - schedulerName: applies-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: AppliesCounter
          - name: SkipFilter
    pluginConfig:
      - name: AppliesCounter
        args:
          schedplug:
            timeout: 10s
  - schedulerName: timeout-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: SleepyFilter
          - name: FreeCpu
    pluginConfig:
      - name: SleepyFilter
        args:
          sleep_ms: 20
          schedplug:
            timeout: 50ms
            failurePolicy: Ignore
  - schedulerName: refresh-fail
    plugins:
      multiPoint:
        enabled:
          - name: RefreshProbe
    pluginConfig:
      - name: RefreshProbe
        args:
          mode: fail
  - schedulerName: refresh-hang
    plugins:
      multiPoint:
        enabled:
          - name: RefreshProbe
    pluginConfig:
      - name: RefreshProbe
        args:
          mode: hang
          hang_ms: )"
      << options.hang_ms << R"(
  - schedulerName: podcycle-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: PodCycle
    pluginConfig:
      - name: PodCycle
        args:
          log_file: ")"
      << (options.pod_cycle_log.empty() ? dir / "pod_cycle.log"
                                        : options.pod_cycle_log)
             .string()
      << "\"\n";
  return file;
}

v1::Pod labelled_pod(const std::string& uid,
                     const std::map<std::string, std::string>& labels) {
  v1::Pod p;
  p.set_namespace_("ns");
  p.set_name("pod-" + uid);
  p.set_uid(uid);
  for (const auto& [k, v] : labels) {
    v1::KeyValue* kv = p.add_labels();
    kv->set_key(k);
    kv->set_value(v);
  }
  return p;
}

v1::HandshakeRequest test_handshake_request() {
  v1::HandshakeRequest request;
  request.set_protocol_version(v1::PROTOCOL_VERSION_1);
  request.set_client_id("test-client");
  const std::vector<std::pair<std::string, std::vector<std::string>>> profiles{
      {"default-scheduler",
       {"LabelFilter", "ResourceFit", "FreeCpu", "Latency", "SpreadScore"}},
      {"bad-scheduler", {"FreeCpu", "BadNormalize"}},
      {"slow-scheduler", {"FreeCpu", "SleepyFilter"}},
      {"applies-scheduler", {"AppliesCounter", "SkipFilter"}},
      {"timeout-scheduler", {"SleepyFilter", "FreeCpu"}},
      {"refresh-fail", {"RefreshProbe"}},
      {"refresh-hang", {"RefreshProbe"}},
      {"podcycle-scheduler", {"PodCycle"}},
  };
  for (const auto& [name, plugins] : profiles) {
    v1::ProfilePlugins* p = request.add_profiles();
    p->set_scheduler_name(name);
    for (const auto& plugin : plugins) p->add_plugins(plugin);
  }
  return request;
}

RunningHost::RunningHost(const std::function<void(HostOptions&)>& tweak,
                         const TestConfigOptions& config) {
  HostOptions options;
  options.config = write_test_config(dir_.path(), config);
  options.plugins = test_plugin_dir();
  options.listen = "unix://" + (dir_.path() / "host.sock").string();
  if (tweak) tweak(options);
  std::ostringstream diagnostics;
  try {
    app_ = HostApp::start(options, diagnostics);
  } catch (const StartupError& e) {
    throw std::runtime_error(std::string(e.what()) + "\n" + diagnostics.str());
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  channel_ = grpc::CreateCustomChannel(
      app_->target(), grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Host::NewStub(channel_);
}

RunningHost::~RunningHost() {
  stub_.reset();
  channel_.reset();
  app_.reset();
}

std::string RunningHost::handshake() {
  grpc::ClientContext context;
  v1::HandshakeResponse response;
  const grpc::Status status =
      stub_->Handshake(&context, test_handshake_request(), &response);
  if (!status.ok()) {
    throw std::runtime_error("handshake failed: " + status.error_message());
  }
  return response.session_id();
}

int64_t RandomCluster::uniform(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

v1::Node RandomCluster::node(uint32_t slot, const std::string& name,
                             int64_t generation, int labels) {
  v1::Node n;
  n.set_index(slot);
  n.set_name(name);
  n.set_generation(generation);
  auto label = [&](const std::string& k, const std::string& v) {
    v1::KeyValue* kv = n.add_labels();
    kv->set_key(k);
    kv->set_value(v);
  };
  static const char* const kStandard[] = {"kubernetes.io/hostname",
                                          "topology.kubernetes.io/zone",
                                          "topology.kubernetes.io/region",
                                          "node.kubernetes.io/instance-type",
                                          "kubernetes.io/os",
                                          "kubernetes.io/arch",
                                          "disktype"};
  int added = 0;
  for (const char* key : kStandard) {
    if (added >= labels) break;
    const std::string k = key;
    if (k == "kubernetes.io/hostname") label(k, name);
    if (k == "topology.kubernetes.io/zone")
      label(k, "zone-" + std::to_string(uniform(0, 3)));
    if (k == "topology.kubernetes.io/region") label(k, "region-1");
    if (k == "node.kubernetes.io/instance-type")
      label(k, "m5." + std::to_string(uniform(1, 4)) + "xlarge");
    if (k == "kubernetes.io/os") label(k, "linux");
    if (k == "kubernetes.io/arch")
      label(k, uniform(0, 9) == 0 ? "arm64" : "amd64");
    if (k == "disktype") label(k, uniform(0, 1) ? "ssd" : "hdd");
    ++added;
  }
  if (added < labels && uniform(0, 19) == 0) {
    label("test/cordon", "true");
    ++added;
  }
  if (added < labels && uniform(0, 3) == 0) {
    label("test/latency", std::to_string(uniform(1, 300)));
    ++added;
  }
  if (added < labels && inject_errors && uniform(0, 1999) == 0) {
    label("test/score-error", "true");
    ++added;
  }
  for (int i = 0; added < labels; ++i, ++added) {
    label("example.com/team-label-" + std::to_string(i),
          "value-" + std::to_string(uniform(0, 2)));
  }
  auto resource = [](auto* list, const std::string& resource_name,
                     int64_t value) {
    v1::Resource* r = list->Add();
    r->set_name(resource_name);
    r->set_value(value);
  };
  const int64_t cpu = uniform(2, 64) * 1000;
  const int64_t memory = uniform(4, 256) << 30;
  resource(n.mutable_allocatable(), "cpu", cpu);
  resource(n.mutable_allocatable(), "memory", memory);
  resource(n.mutable_allocatable(), "pods", 110);
  resource(n.mutable_requested(), "cpu", uniform(0, cpu));
  resource(n.mutable_requested(), "memory", uniform(0, memory));
  n.set_pod_count(static_cast<uint32_t>(uniform(0, 110)));
  if (uniform(0, 9) == 0) {
    v1::Taint* t = n.add_taints();
    t->set_key("dedicated");
    t->set_value("gpu");
    t->set_effect("NoSchedule");
  }
  return n;
}

v1::Pod RandomCluster::pod() {
  v1::Pod p;
  p.set_namespace_("ns-" + std::to_string(uniform(0, 4)));
  p.set_name("pod-" + std::to_string(pods_++));
  p.set_uid("uid-" + std::to_string(pods_));
  auto kv = [](auto* list, const std::string& k, const std::string& v) {
    v1::KeyValue* e = list->Add();
    e->set_key(k);
    e->set_value(v);
  };
  kv(p.mutable_labels(), "app", "app-" + std::to_string(uniform(0, 9)));
  if (uniform(0, 4) == 0) kv(p.mutable_labels(), "test/no-latency", "true");
  if (inject_errors && !known_nodes.empty() && uniform(0, 99) == 0) {
    kv(p.mutable_labels(), "test/filter-error",
       known_nodes[static_cast<size_t>(
           uniform(0, static_cast<int64_t>(known_nodes.size()) - 1))]);
  }
  switch (uniform(0, 3)) {
    case 0:
      kv(p.mutable_node_selector(), "topology.kubernetes.io/zone",
         "zone-" + std::to_string(uniform(0, 3)));
      break;
    case 1:
      kv(p.mutable_node_selector(), "disktype", "ssd");
      break;
    default:
      break;
  }
  auto resource = [&](const std::string& name, int64_t value) {
    v1::Resource* r = p.add_requests();
    r->set_name(name);
    r->set_value(value);
  };
  resource("cpu", uniform(1, 80) * 100);
  resource("memory", uniform(1, 64) << 28);
  if (uniform(0, 2) == 0) {
    v1::Toleration* t = p.add_tolerations();
    t->set_key("dedicated");
    t->set_operator_(uniform(0, 1) ? "Exists" : "Equal");
    t->set_value("gpu");
    t->set_effect("NoSchedule");
  }
  p.set_priority(static_cast<int32_t>(uniform(0, 1000)));
  return p;
}

PreFilterAnswer decode(const v1::PreFilterResponse& r) {
  PreFilterAnswer a;
  a.plugins.assign(r.plugins().begin(), r.plugins().end());
  a.skipped.assign(r.skipped().begin(), r.skipped().end());
  for (int i = 0; i < r.rejected_nodes_size(); ++i) {
    a.rejected[r.rejected_nodes(i)] = {
        r.plugins(static_cast<int>(r.rejected_by(i))), r.codes(i),
        r.reasons(static_cast<int>(r.reason(i)))};
  }
  return a;
}

std::vector<ScoreAnswer> decode(const v1::PreScoreResponse& r) {
  std::vector<ScoreAnswer> out;
  for (const v1::PluginScores& p : r.plugins()) {
    out.push_back({p.plugin(), p.skipped(),
                   std::vector<int64_t>(p.scores().begin(), p.scores().end()),
                   p.error()});
  }
  return out;
}

struct DirectEvaluator::Profile {
  std::string name;
  std::vector<std::unique_ptr<PluginInstance>> filters;
  std::vector<std::unique_ptr<PluginInstance>> scorers;
};

DirectEvaluator::DirectEvaluator(const std::filesystem::path& config,
                                 const std::filesystem::path& plugin_dir) {
  const SchedulerConfig parsed = load_scheduler_config(config);
  const LoadResult loaded = load_plugin_directory(plugin_dir);
  for (const ResolvedProfile& rp : resolve_profiles(parsed, loaded.plugins)) {
    auto p = std::make_unique<Profile>();
    p->name = rp.scheduler_name;
    for (const auto& f : rp.filters) {
      p->filters.push_back(PluginInstance::create(f.library, f.args_json));
    }
    for (const auto& s : rp.scorers) {
      p->scorers.push_back(PluginInstance::create(s.library, s.args_json));
    }
    profiles_.push_back(std::move(p));
  }
}

DirectEvaluator::~DirectEvaluator() = default;

const DirectEvaluator::Profile& DirectEvaluator::profile(
    const std::string& name) const {
  for (const auto& p : profiles_) {
    if (p->name == name) return *p;
  }
  throw std::runtime_error("no profile " + name);
}

PreFilterAnswer DirectEvaluator::prefilter(
    const std::string& name, const v1::Pod& pod_proto,
    const std::map<uint32_t, v1::Node>& nodes) const {
  const Profile& p = profile(name);
  const PodModel pod(pod_from_proto(pod_proto));
  PreFilterAnswer a;
  for (const auto& f : p.filters) {
    a.plugins.push_back(f->name());
    a.skipped.push_back(!f->applies(pod.view()));
  }
  for (const auto& [slot, node_proto] : nodes) {
    const NodeModel node(node_from_proto(node_proto));
    for (size_t i = 0; i < p.filters.size(); ++i) {
      if (a.skipped[i]) continue;
      Verdict v = p.filters[i]->filter(pod.view(), node.view());
      if (!v.ok()) {
        a.rejected[slot] = {p.filters[i]->name(), static_cast<int>(v.code),
                            v.reason};
        break;
      }
    }
  }
  return a;
}

std::vector<ScoreAnswer> DirectEvaluator::prescore(
    const std::string& name, const v1::Pod& pod_proto,
    const std::vector<v1::Node>& nodes) const {
  const Profile& p = profile(name);
  const PodModel pod(pod_from_proto(pod_proto));
  std::vector<std::unique_ptr<NodeModel>> models;
  for (const auto& n : nodes) {
    models.push_back(std::make_unique<NodeModel>(node_from_proto(n)));
  }
  std::vector<ScoreAnswer> out;
  for (const auto& s : p.scorers) {
    ScoreAnswer a;
    a.plugin = s->name();
    if (!s->applies(pod.view())) {
      a.skipped = true;
      out.push_back(a);
      continue;
    }
    std::vector<schedplug_node_score> scores;
    for (const auto& r : models) {
      ScoreResult result = s->score(pod.view(), r->view());
      if (result.code != SCHEDPLUG_SUCCESS) {
        a.error = result.reason;
        break;
      }
      scores.push_back({r->view().name, result.score});
    }
    if (a.error.empty()) {
      Verdict v = s->normalize(pod.view(), scores);
      if (!v.ok()) a.error = v.reason;
    }
    if (a.error.empty()) {
      for (const auto& sc : scores) {
        if (sc.score < 0 || sc.score > 100) {
          a.error = "out of range";
          break;
        }
        a.scores.push_back(sc.score);
      }
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace schedplug::host::testing
