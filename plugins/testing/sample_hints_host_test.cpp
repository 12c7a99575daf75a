// The hints the sample plugins promise in create() (plugin.h,
// SCHEDPLUG_HINT_*) reach the scheduler's shim: schedplug-host loads
// plugins.d as it is built and reports them in the Handshake's
// PluginInfo.hints. The filters promise both hints; NetworkLatency (a
// scorer with a refresh hook) promises nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

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
  constexpr uint64_t kBoth = SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS |
                             SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY;
  const std::map<std::string, uint64_t> want = {
      {"HwEncrypt", kBoth}, {"DedicatedNodes", kBoth}, {"NetworkLatency", 0}};
  std::map<std::string, uint64_t> got;
  for (const v1::PluginInfo& p : response.plugins()) got[p.name()] = p.hints();
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace schedplug::host::testing
