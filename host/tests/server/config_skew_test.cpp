// The Handshake's config-skew check: the shim sends the
// weights, failure policies and args kube-scheduler read for each native
// plugin; the host refuses a session whose settings differ from its own
// reading of the config, naming the profile, the plugin and the field, and
// counts the refusal. Differences of spelling only (`20` and `20.0`, key
// order) are not skew.
#include <gtest/gtest.h>

#include <string>

#include "host/identity/config_skew.hpp"
#include "test_support.hpp"

namespace schedplug::host::testing {
namespace {

using grpc::StatusCode;

// timeout-scheduler as kube-scheduler reads the test config: SleepyFilter
// (filter only) with sleep_ms 20 and schedplug {timeout: 50ms,
// failurePolicy: Ignore}; FreeCpu (filter and score) with no args, weight
// 1 (multiPoint without a weight).
v1::HandshakeRequest request_with_settings() {
  v1::HandshakeRequest request = test_handshake_request();
  for (v1::ProfilePlugins& p : *request.mutable_profiles()) {
    if (p.scheduler_name() != "timeout-scheduler") continue;
    v1::PluginSettings* sleepy = p.add_settings();
    sleepy->set_name("SleepyFilter");
    // Go's encoding/json spells the number 20.0 and orders keys its own
    // way: still the same args.
    sleepy->set_args_json(
        R"({"schedplug":{"failurePolicy":"Ignore","timeout":"50ms"},)"
        R"("sleep_ms":20.0})");
    sleepy->set_failure_policy("Ignore");
    sleepy->set_timeout_ms(50);
    v1::PluginSettings* free_cpu = p.add_settings();
    free_cpu->set_name("FreeCpu");
    free_cpu->set_weight(1);
    free_cpu->set_failure_policy("Fail");
  }
  return request;
}

v1::PluginSettings& settings_of(v1::HandshakeRequest& request,
                                const std::string& plugin) {
  for (v1::ProfilePlugins& p : *request.mutable_profiles()) {
    for (v1::PluginSettings& s : *p.mutable_settings()) {
      if (s.name() == plugin) return s;
    }
  }
  throw std::runtime_error("no settings for " + plugin);
}

class ConfigSkew : public ::testing::Test {
 protected:
  grpc::Status handshake(const v1::HandshakeRequest& request) {
    grpc::ClientContext context;
    v1::HandshakeResponse response;
    return host_.stub().Handshake(&context, request, &response);
  }
  // The refusal names the profile, the plugin and the field, and tells
  // the operator what to do.
  void expect_skew(const v1::HandshakeRequest& request,
                   const std::string& plugin, const std::string& field) {
    const grpc::Status s = handshake(request);
    ASSERT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT)
        << s.error_message();
    const std::string& m = s.error_message();
    EXPECT_NE(m.find("read different KubeSchedulerConfigurations"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("profile \"timeout-scheduler\", plugin \"" + plugin +
                     "\": " + field),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("restart kube-scheduler (or the schedplug-host sidecar, "
                     "whichever read the old file) or roll back the "
                     "ConfigMap"),
              std::string::npos)
        << m;
    ++refusals_;
  }
  std::string refusal_metric() const {
    return "schedplug_handshake_refusals_total{reason=\"config_skew\"} " +
           std::to_string(refusals_);
  }

  RunningHost host_;
  int refusals_ = 0;
};

TEST_F(ConfigSkew, SameSettingsSpelledDifferentlyAreAccepted) {
  const grpc::Status s = handshake(request_with_settings());
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(ConfigSkew, AShimThatSendsNoSettingsIsNotCompared) {
  const grpc::Status s = handshake(test_handshake_request());
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(ConfigSkew, ArgsValueDiffers) {
  v1::HandshakeRequest request = request_with_settings();
  settings_of(request, "SleepyFilter")
      .set_args_json(R"({"sleep_ms":21,"schedplug":{"timeout":"50ms"}})");
  expect_skew(request, "SleepyFilter",
              "args.sleep_ms is 21 in kube-scheduler and 20 in the host's "
              "config");

  settings_of(request, "SleepyFilter")
      .set_args_json(R"({"sleep_ms":20,"extra":{"list":[1,"x"]}})");
  expect_skew(request, "SleepyFilter",
              "args.extra is {\"list\":[1,\"x\"]} in kube-scheduler and not "
              "set in the host's config");
  EXPECT_NE(host_.app().metrics().text().find(refusal_metric()),
            std::string::npos)
      << host_.app().metrics().text();
}

TEST_F(ConfigSkew, WeightDiffers) {
  v1::HandshakeRequest request = request_with_settings();
  settings_of(request, "FreeCpu").set_weight(3);
  expect_skew(request, "FreeCpu",
              "the score weight is 3 in kube-scheduler and 1 in the host's "
              "config");
}

TEST_F(ConfigSkew, PolicyDiffers) {
  v1::HandshakeRequest request = request_with_settings();
  settings_of(request, "SleepyFilter").set_failure_policy("Fail");
  expect_skew(request, "SleepyFilter",
              "args.schedplug.failurePolicy is \"Fail\" in kube-scheduler and "
              "\"Ignore\" in the host's config");

  request = request_with_settings();
  settings_of(request, "SleepyFilter").set_timeout_ms(0);
  expect_skew(request, "SleepyFilter",
              "args.schedplug.timeout is not set in kube-scheduler and "
              "\"50ms\" in the host's config");
  EXPECT_NE(host_.app().metrics().text().find(refusal_metric()),
            std::string::npos)
      << host_.app().metrics().text();
}

TEST_F(ConfigSkew, PluginMissingFromTheSchedulersConfig) {
  v1::HandshakeRequest request = request_with_settings();
  for (v1::ProfilePlugins& p : *request.mutable_profiles()) {
    if (p.scheduler_name() != "timeout-scheduler") continue;
    p.mutable_settings()->RemoveLast();  // FreeCpu
    p.mutable_plugins()->RemoveLast();
  }
  expect_skew(request, "FreeCpu",
              "enabled in the host's config but not in kube-scheduler's");
}

TEST(JsonDifferences, NumbersCompareAsDoublesAndKeyOrderIsIgnored) {
  using nlohmann::json;
  EXPECT_TRUE(json_differences(json::parse(R"({"a":1,"b":[1e2,"x"]})"),
                               json::parse(R"({"b":[100.0,"x"],"a":1.0})"),
                               "args")
                  .empty());
  // A number beyond 64 bits: Go reads it as a float, the host as a double.
  EXPECT_TRUE(json_differences(json::parse("18446744073709551616"),
                               json::parse("1.8446744073709552e+19"), "args")
                  .empty());
  const auto d =
      json_differences(json::parse(R"({"a b":{"c":[1,2]}})"),
                       json::parse(R"({"a b":{"c":[1,"2"]}})"), "args");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0],
            "args[\"a b\"].c[1] is 2 in kube-scheduler and \"2\" in the host's "
            "config");
}

}  // namespace
}  // namespace schedplug::host::testing
