// The hints the sample plugins promise in create() (plugin.h,
// SCHEDPLUG_HINT_*) reach the scheduler's shim: schedplug-host loads
// plugins.d as it is built and reports them in the Handshake's
// PluginInfo.hints, with the pod label and annotation keys they declare
// (PluginInfo.pod_label_keys, pod_annotation_keys). The filters promise the
// three hints and declare the one pod annotation they read; NetworkLatency
// (a scorer with a refresh hook) promises and declares nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

TEST(SampleHints, TheHandshakeCarriesWhatEachPluginPromised) {
  TempDir dir;
  const auto latency = dir.path() / "latency.txt";
  std::ofstream(latency) << "n1 3\n";
  const auto config = dir.path() / "config.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: sample-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: DedicatedNodes
          - name: NetworkLatency
    pluginConfig:
      - name: NetworkLatency
        args:
          latencyFile: )"
                        << latency.string() << "\n";
  RunningHost host([&](HostOptions& o) {
    o.config = config;
    o.plugins = SCHEDPLUG_SAMPLE_PLUGIN_DIR;
  });
  v1::HandshakeRequest request;
  request.set_protocol_version(v1::PROTOCOL_VERSION_1);
  request.set_client_id("sample-hints-test");
  v1::ProfilePlugins* profile = request.add_profiles();
  profile->set_scheduler_name("sample-scheduler");
  for (const char* name : {"HwEncrypt", "DedicatedNodes", "NetworkLatency"}) {
    profile->add_plugins(name);
  }
  grpc::ClientContext context;
  v1::HandshakeResponse response;
  const grpc::Status status =
      host.stub().Handshake(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  constexpr uint64_t kAll = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                            SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
                            SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS;
  static_assert(kAll == 0x7);
  const std::map<std::string, uint64_t> want = {
      {"HwEncrypt", kAll}, {"DedicatedNodes", kAll}, {"NetworkLatency", 0}};
  using Keys = std::vector<std::string>;
  // Label keys, then annotation keys.
  const std::map<std::string, std::pair<Keys, Keys>> want_keys = {
      {"HwEncrypt", {{}, {"myorg.io/require-hw-encrypt"}}},
      {"DedicatedNodes", {{}, {"schedplug.io/dedicated-ok"}}},
      {"NetworkLatency", {{}, {}}}};
  std::map<std::string, uint64_t> got;
  std::map<std::string, std::pair<Keys, Keys>> got_keys;
  for (const v1::PluginInfo& p : response.plugins()) {
    got[p.name()] = p.hints();
    got_keys[p.name()] = {
        Keys(p.pod_label_keys().begin(), p.pod_label_keys().end()),
        Keys(p.pod_annotation_keys().begin(), p.pod_annotation_keys().end())};
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_keys, want_keys);
}

// A plugin enabled in two profiles with different args reports the union
// of its instances' keys, sorted and without duplicates.
TEST(SampleHints, TheHandshakeCarriesTheUnionOfTheDeclaredKeys) {
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: first
    plugins:
      multiPoint:
        enabled:
          - name: DedicatedNodes
    pluginConfig:
      - name: DedicatedNodes
        args:
          podAnnotation: z.io/ok
  - schedulerName: second
    plugins:
      multiPoint:
        enabled:
          - name: DedicatedNodes
  - schedulerName: third
    plugins:
      multiPoint:
        enabled:
          - name: DedicatedNodes
    pluginConfig:
      - name: DedicatedNodes
        args:
          podAnnotation: z.io/ok
)";
  RunningHost host([&](HostOptions& o) {
    o.config = config;
    o.plugins = SCHEDPLUG_SAMPLE_PLUGIN_DIR;
  });
  v1::HandshakeRequest request;
  request.set_protocol_version(v1::PROTOCOL_VERSION_1);
  request.set_client_id("sample-hints-test");
  for (const char* name : {"first", "second", "third"}) {
    v1::ProfilePlugins* profile = request.add_profiles();
    profile->set_scheduler_name(name);
    profile->add_plugins("DedicatedNodes");
  }
  grpc::ClientContext context;
  v1::HandshakeResponse response;
  const grpc::Status status =
      host.stub().Handshake(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  bool seen = false;
  for (const v1::PluginInfo& p : response.plugins()) {
    if (p.name() != "DedicatedNodes") continue;
    seen = true;
    EXPECT_EQ(p.hints(), SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                             SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY |
                             SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS);
    EXPECT_EQ(p.pod_label_keys_size(), 0);
    EXPECT_EQ(
        std::vector<std::string>(p.pod_annotation_keys().begin(),
                                 p.pod_annotation_keys().end()),
        (std::vector<std::string>{"schedplug.io/dedicated-ok", "z.io/ok"}));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace schedplug::host::testing
