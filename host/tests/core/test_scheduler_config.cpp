#include "host/config/scheduler_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace schedplug::host {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const std::string& yaml) {
  try {
    parse_scheduler_config(yaml, "sched.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(parsed without error)";
}

constexpr const char* kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

TEST(SchedulerConfig, ParsesProfilesPointsAndArgs) {
  const std::string yaml = std::string(kHeader) + R"(clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: my-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: HwEncrypt
          - name: NetworkLatency
            weight: 3
      filter:
        disabled:
          - name: "*"
    pluginConfig:
      - name: NetworkLatency
        args:
          maxLatencyMs: 20
          ratio: 0.5
          strict: true
          nothing: null
          quoted: "42"
          zone: eu-west
          list: [1, two, 3.0]
          hex: 0x1F
          schedplug:
            timeout: 50ms
  - plugins:
      score:
        enabled: [{name: A, weight: 2}]
)";
  SchedulerConfig c = parse_scheduler_config(yaml, "sched.yaml");
  EXPECT_EQ(c.file, "sched.yaml");
  ASSERT_EQ(c.profiles.size(), 2u);
  const Profile& p = c.profiles[0];
  EXPECT_EQ(p.scheduler_name, "my-scheduler");
  EXPECT_EQ(p.line, 8);
  const PluginSet& mp = p.plugins.at(ExtensionPoint::kMultiPoint);
  ASSERT_EQ(mp.enabled.size(), 2u);
  EXPECT_EQ(mp.enabled[0].name, "HwEncrypt");
  EXPECT_FALSE(mp.enabled[0].weight.has_value());
  EXPECT_EQ(mp.enabled[0].line, 12);
  EXPECT_EQ(mp.enabled[1].weight, 3);
  EXPECT_EQ(p.plugins.at(ExtensionPoint::kFilter).disabled[0].name, "*");
  ASSERT_EQ(p.plugin_config.size(), 1u);
  EXPECT_EQ(p.plugin_config[0].name, "NetworkLatency");
  auto args = nlohmann::json::parse(p.plugin_config[0].args_json);
  EXPECT_EQ(args["maxLatencyMs"], 20);
  EXPECT_TRUE(args["maxLatencyMs"].is_number_integer());
  EXPECT_DOUBLE_EQ(args["ratio"].get<double>(), 0.5);
  EXPECT_EQ(args["strict"], true);
  EXPECT_TRUE(args["nothing"].is_null());
  EXPECT_EQ(args["quoted"], "42");  // quoted stays a string
  EXPECT_EQ(args["zone"], "eu-west");
  EXPECT_EQ(args["list"], nlohmann::json::parse(R"([1, "two", 3.0])"));
  EXPECT_EQ(args["hex"], 31);
  EXPECT_EQ(args["schedplug"]["timeout"], "50ms");

  EXPECT_EQ(c.profiles[1].scheduler_name, "default-scheduler");
  EXPECT_EQ(c.profiles[1].plugins.at(ExtensionPoint::kScore).enabled[0].weight,
            2);
}

TEST(SchedulerConfig, NoProfilesMeansTheDefaultProfile) {
  SchedulerConfig c = parse_scheduler_config(kHeader);
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
}

TEST(SchedulerConfig, EmptyArgsAreAnEmptyObject) {
  SchedulerConfig c = parse_scheduler_config(std::string(kHeader) + R"(
profiles:
  - pluginConfig:
      - name: A
)");
  EXPECT_EQ(c.profiles[0].plugin_config[0].args_json, "{}");
}

TEST(SchedulerConfig, WrongApiVersionAndKind) {
  EXPECT_THAT(error_of("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                       "kind: KubeSchedulerConfiguration\n"),
              AllOf(HasSubstr("sched.yaml:1: apiVersion is "
                              "\"kubescheduler.config.k8s.io/v1beta3\""),
                    HasSubstr("kubescheduler.config.k8s.io/v1")));
  EXPECT_THAT(error_of("apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "kind: Pod\n"),
              HasSubstr("sched.yaml:2: kind is \"Pod\"; expected "
                        "KubeSchedulerConfiguration"));
  EXPECT_THAT(error_of("kind: KubeSchedulerConfiguration\n"),
              HasSubstr("apiVersion is missing"));
}

TEST(SchedulerConfig, NotYamlHasALine) {
  EXPECT_THAT(error_of(std::string(kHeader) + "profiles: [\n  - {a: b\n"),
              AllOf(HasSubstr("sched.yaml:"), HasSubstr("not valid YAML")));
  EXPECT_THAT(error_of("- just\n- a list\n"),
              HasSubstr("not a KubeSchedulerConfiguration"));
}

// yaml-cpp builds an anchor that holds an alias to itself as a cycle, and
// expands aliases of aliases without limit: both are refused with a line
// before anything walks the document (the args reader used to recurse
// until the stack ran out).
TEST(SchedulerConfig, RecursiveAnchorsAndAliasBombsAreRefused) {
  const std::string profile = std::string(kHeader) +
                              "profiles:\n"
                              "  - schedulerName: default-scheduler\n"
                              "    plugins:\n"
                              "      filter:\n"
                              "        enabled: [{name: HwEncrypt}]\n"
                              "    pluginConfig:\n"
                              "      - name: HwEncrypt\n";
  EXPECT_THAT(error_of(profile + "        args: &a {loop: *a}\n"),
              AllOf(HasSubstr("sched.yaml:10: "),
                    HasSubstr("contains an alias (*name) to itself")));
  EXPECT_THAT(error_of(profile + "        args: &a [1, [2, *a]]\n"),
              HasSubstr("to itself"));
  std::string bomb =
      profile + "        args:\n          a0: &a0 [x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "          a" + std::to_string(i) + ": &a" + std::to_string(i) +
            " [" + prev + ", " + prev + ", " + prev + ", " + prev + "]\n";
  }
  EXPECT_THAT(error_of(bomb), AllOf(HasSubstr("sched.yaml:"),
                                    HasSubstr("through its aliases")));
  std::string deep = profile + "        args: ";
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  EXPECT_THAT(error_of(deep + "\n"), HasSubstr("nested more than 256"));
  // Aliases that repeat a value a few times are fine.
  EXPECT_EQ(
      error_of(profile + "        args: {a: &x {k: v}, b: *x, c: [*x, *x]}\n"),
      "(parsed without error)");
}

TEST(SchedulerConfig, UnknownExtensionPointSuggestsOne) {
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - schedulerName: s
    plugins:
      filters:
        enabled: [{name: A}]
)"),
              AllOf(HasSubstr("sched.yaml:6: profile \"s\": \"filters\" is "
                              "not a kube-scheduler extension point"),
                    HasSubstr("did you mean \"filter\"?")));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - plugins:
      multipoint: {}
)"),
              HasSubstr("did you mean \"multiPoint\"?"));
}

TEST(SchedulerConfig, NewerExtensionPointsAreKnown) {
  SchedulerConfig c = parse_scheduler_config(std::string(kHeader) + R"(
profiles:
  - plugins:
      placementScore: {enabled: [{name: X}]}
      podGroupPostFilter: {}
)");
  EXPECT_EQ(
      c.profiles[0].plugins.at(ExtensionPoint::kPlacementScore).enabled[0].name,
      "X");
}

TEST(SchedulerConfig, UnknownFieldsInsideProfilesAreErrors) {
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - plugins:
      filter:
        enable: [{name: A}]
)"),
              AllOf(HasSubstr("sched.yaml:6: unknown field \"enable\""),
                    HasSubstr("did you mean \"enabled\"?")));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - schedulerNmae: x
)"),
              HasSubstr("did you mean \"schedulerName\"?"));
}

TEST(SchedulerConfig, BadValues) {
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - plugins:
      score:
        enabled: [{name: A, weight: heavy}]
)"),
              HasSubstr("the weight of plugin \"A\" must be an integer"));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - plugins:
      score:
        enabled: [{weight: 1}]
)"),
              HasSubstr("has no name"));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - pluginConfig:
      - name: A
        args: [1, 2]
)"),
              HasSubstr("the args of \"A\" must be a mapping"));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - schedulerName: a
  - schedulerName: a
)"),
              HasSubstr("two profiles are named \"a\""));
  EXPECT_THAT(error_of(std::string(kHeader) + R"(profiles:
  - pluginConfig:
      - name: A
      - name: A
)"),
              HasSubstr("pluginConfig for \"A\" appears twice"));
}

// Every problem the parser can step over is reported in one run, and the
// rest of the file is still read.
TEST(SchedulerConfig, CollectsEveryProblemAndReadsTheRest) {
  const std::string yaml = std::string(kHeader) + R"(profiles:
  - schedulerName: a
    plugins:
      score:
        enabled:
          - name: A
            weight: heavy
          - name: B
            wieght: 2
          - {weight: 1}
      prefilter:
        enabled: [{name: C}]
      filter:
        enabled: [{name: D}]
    pluginConfig:
      - name: A
        args: {x: 1}
      - name: A
      - name: E
        args: [1]
  - schedulerName: a
  - schedulerName: b
    plugins:
      score:
        enabled: [{name: F, weight: 1.5}]
)";
  std::vector<std::string> problems;
  const SchedulerConfig c = parse_scheduler_config(yaml, "s.yaml", problems);
  ASSERT_EQ(problems.size(), 8u) << ::testing::PrintToString(problems);
  EXPECT_THAT(problems[0], HasSubstr("s.yaml:9: profile \"a\", extension "
                                     "point \"score\": enabled: the weight "
                                     "of plugin \"A\" must be an integer, "
                                     "not \"heavy\""));
  EXPECT_THAT(problems[1], HasSubstr("s.yaml:11: unknown field \"wieght\""));
  EXPECT_THAT(problems[2], HasSubstr("s.yaml:12: an entry of"));
  EXPECT_THAT(problems[3], HasSubstr("did you mean \"preFilter\"?"));
  EXPECT_THAT(problems[4], HasSubstr("pluginConfig for \"A\" appears twice"));
  EXPECT_THAT(problems[5], HasSubstr("the args of \"E\" must be a mapping"));
  EXPECT_THAT(problems[6], HasSubstr("two profiles are named \"a\""));
  EXPECT_THAT(problems[7], HasSubstr("weight of plugin \"F\""));
  ASSERT_EQ(c.profiles.size(), 2u);
  const auto& score = c.profiles[0].plugins.at(ExtensionPoint::kScore).enabled;
  ASSERT_EQ(score.size(), 2u);  // A without its weight, B
  EXPECT_EQ(score[0].name, "A");
  EXPECT_FALSE(score[0].weight.has_value());
  EXPECT_EQ(score[1].name, "B");
  EXPECT_EQ(c.profiles[0].plugins.at(ExtensionPoint::kFilter).enabled[0].name,
            "D");
  ASSERT_EQ(c.profiles[0].plugin_config.size(), 1u);
  EXPECT_EQ(c.profiles[0].plugin_config[0].args_json, R"({"x":1})");
  EXPECT_EQ(c.profiles[1].scheduler_name, "b");
  // The throwing form lists the same problems, one a line.
  try {
    parse_scheduler_config(yaml, "s.yaml");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems(), problems);
    EXPECT_THAT(e.what(), HasSubstr("\ns.yaml:11: unknown field"));
  }
}

TEST(SchedulerConfig, MissingFile) {
  EXPECT_THROW(load_scheduler_config("/nonexistent/sched.yaml"), ConfigError);
}

TEST(ExtensionPoints, RoundTripNames) {
  EXPECT_STREQ(to_string(ExtensionPoint::kMultiPoint), "multiPoint");
  EXPECT_STREQ(to_string(ExtensionPoint::kPreFilter), "preFilter");
  EXPECT_EQ(all_extension_points().front(), ExtensionPoint::kMultiPoint);
  EXPECT_EQ(all_extension_points().size(), 16u);
}

// Found by fuzzing (fuzz/config/regressions/numbers_out_of_range.yaml):
// std::stod threw out of the parser for numbers a double cannot hold.
// Like kube-scheduler's YAML reader, they stay strings; an underflow is 0.
TEST(SchedulerConfig, NumbersOutOfRangeStayStrings) {
  SchedulerConfig c = parse_scheduler_config(std::string(kHeader) + R"(
profiles:
  - pluginConfig:
      - name: A
        args:
          big: 1e400
          negative: -1e400
          tiny: 1e-400
          wide: 123456789012345678901234567890
          hex: 0xffffffffffffffffffffffffffffffffff
)");
  auto args = nlohmann::json::parse(c.profiles[0].plugin_config[0].args_json);
  EXPECT_EQ(args["big"], "1e400");
  EXPECT_EQ(args["negative"], "-1e400");
  EXPECT_TRUE(args["tiny"].is_number_float());
  EXPECT_EQ(args["tiny"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(args["wide"].get<double>(), 1.2345678901234568e29);
  EXPECT_EQ(args["hex"], "0xffffffffffffffffffffffffffffffffff");
}

}  // namespace
}  // namespace schedplug::host
